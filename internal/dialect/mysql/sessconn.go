package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// sessConn is a session's own connection, used through the driver's
// interfaces (package database/sql/driver) rather than through
// database/sql: a session holds one connection for its whole life and
// never shares it, so the pool's locking, its conversion of every argument
// and the reflection of every Scan are cost without use. The driver
// (go-sql-driver/mysql) still speaks the protocol: prepared statements in
// the binary protocol, text queries (several statements in one, the
// session's connector allowing multiple statements) in the text protocol.
//
// A sessConn is owned by one goroutine; only interrupt may be called from
// another.
type sessConn struct {
	dc   driver.Conn
	nc   net.Conn // dc's socket, for interrupt
	args []driver.NamedValue
	vals []driver.Value
}

// openSessConn opens a new connection for a session on the sessions'
// connector, which dials a raw socket (sessionDialer) and allows several
// statements in one query.
func (d *DB) openSessConn(ctx context.Context) (*sessConn, error) {
	var nc net.Conn
	dc, err := d.sessions.Connect(context.WithValue(ctx, dialedKey{}, &nc))
	if err != nil {
		return nil, d.wrap("open session", err)
	}
	if nc == nil {
		_ = dc.Close()
		return nil, d.wrap("open session", errors.New("the session's connection was not dialed for it"))
	}
	for _, ok := range []bool{implements[driver.ConnPrepareContext](dc), implements[driver.QueryerContext](dc), implements[driver.ExecerContext](dc)} {
		if !ok {
			_ = dc.Close()
			return nil, d.wrap("open session", fmt.Errorf("the driver's connection (%T) lacks a context method", dc))
		}
	}
	return &sessConn{dc: dc, nc: nc, vals: make([]driver.Value, 0, 16)}, nil
}

func implements[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// prepare prepares query on the connection.
func (c *sessConn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.dc.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if !implements[driver.StmtQueryContext](st) {
		_ = st.Close()
		return nil, fmt.Errorf("the driver's statement (%T) lacks QueryContext", st)
	}
	return st, nil
}

// queryStmt executes the prepared statement st with args (int, int64,
// float64, bool, string, []byte, time.Time or nil).
func (c *sessConn) queryStmt(ctx context.Context, st driver.Stmt, args ...any) (driver.Rows, error) {
	c.args = c.args[:0]
	for i, a := range args {
		if n, ok := a.(int); ok {
			a = int64(n)
		}
		c.args = append(c.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return st.(driver.StmtQueryContext).QueryContext(ctx, c.args)
}

// query sends text, one or more statements, as one query; the rows are the
// first result that has columns.
func (c *sessConn) query(ctx context.Context, text string) (driver.Rows, error) {
	return c.dc.(driver.QueryerContext).QueryContext(ctx, text, nil)
}

// exec sends text, one or more statements none of which returns rows, as
// one query.
func (c *sessConn) exec(ctx context.Context, text string) (driver.Result, error) {
	return c.dc.(driver.ExecerContext).ExecContext(ctx, text, nil)
}

// noBackslashEscapes reports whether the session's sql_mode has
// NO_BACKSLASH_ESCAPES, which changes how strings are written as text
// (interpolate).
func (c *sessConn) noBackslashEscapes(ctx context.Context) (bool, error) {
	rows, err := c.query(ctx, "SELECT @@SESSION.sql_mode")
	if err != nil {
		return false, err
	}
	var mode string
	if err := c.firstRow(rows, &mode); err != nil {
		return false, err
	}
	return strings.Contains(mode, "NO_BACKSLASH_ESCAPES"), nil
}

// next reads rows' next row into c.vals: false at the end of the result.
func (c *sessConn) next(rows driver.Rows) (bool, error) {
	n := len(rows.Columns())
	if cap(c.vals) < n {
		c.vals = make([]driver.Value, n)
	}
	c.vals = c.vals[:n]
	switch err := rows.Next(c.vals); err {
	case nil:
		return true, nil
	case io.EOF:
		return false, nil
	default:
		return false, err
	}
}

// firstRow reads the first row of rows into dest and closes rows, which
// reads the rest of its results: tpcc.ErrNoRows when there is no row.
func (c *sessConn) firstRow(rows driver.Rows, dest ...any) error {
	more, err := c.next(rows)
	if err == nil && more {
		err = scanValues(c.vals, dest)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err == nil && !more {
		err = tpcc.ErrNoRows
	}
	return err
}

// interrupt expires the connection's deadline: the call in flight fails
// at once with a timeout (the driver then closes the connection) and so
// does any later one. net.Conn deadlines are safe to set from another
// goroutine, and the driver sets none of its own (no ReadTimeout or
// WriteTimeout in config) nor watches the calls' contexts when they
// cannot be canceled.
func (c *sessConn) interrupt() { _ = c.nc.SetDeadline(time.Now()) }

// close closes the connection (the server frees its prepared statements
// and rolls back an open transaction).
func (c *sessConn) close() error {
	err := c.dc.Close()
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// scanValues converts a row's values, as the driver gives them (int64,
// uint64, float64, float32, []byte for DECIMAL and strings, time.Time,
// nil), into dest: *int64, *int, *float64, *string, *time.Time, *bool or
// *any; a nil dest skips its column. Text is decoded as tpcc.ScanText
// decodes it.
func scanValues(vals []driver.Value, dest []any) error {
	if len(vals) != len(dest) {
		return fmt.Errorf("%d columns scanned into %d destinations", len(vals), len(dest))
	}
	for i, d := range dest {
		if err := scanValue(vals[i], d); err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return nil
}

func scanValue(v driver.Value, dest any) error {
	switch x := v.(type) {
	case nil:
		_, err := tpcc.ScanText(nil, true, dest)
		return err
	case []byte:
		if ok, err := tpcc.ScanText(x, false, dest); ok {
			return err
		}
	}
	switch d := dest.(type) {
	case nil:
	case *any:
		*d = v
	case *int64:
		x, err := asInt(v)
		*d = x
		return err
	case *int:
		x, err := asInt(v)
		*d = int(x)
		return err
	case *float64:
		switch x := v.(type) {
		case float64:
			*d = x
		case float32:
			*d = float64(x)
		case int64:
			*d = float64(x)
		default:
			return fmt.Errorf("%T into *float64", v)
		}
	case *string:
		x, ok := v.(string)
		if !ok {
			return fmt.Errorf("%T into *string", v)
		}
		*d = x
	case *time.Time:
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("%T into *time.Time", v)
		}
		*d = t
	case *bool:
		x, err := asInt(v)
		*d = x != 0
		return err
	default:
		return fmt.Errorf("cannot scan into %T", dest)
	}
	return nil
}

func asInt(v driver.Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		if x > 1<<63-1 {
			return 0, fmt.Errorf("%d overflows int64", x)
		}
		return int64(x), nil
	case []byte:
		var n int64
		_, err := tpcc.ScanText(x, false, &n)
		return n, err
	}
	return 0, fmt.Errorf("%T into an integer", v)
}
