package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

var _ dialect.TPCH = (*DB)(nil)

// TPCHFlavor: MariaDB and MySQL take the specification's own syntax.
func (d *DB) TPCHFlavor() tpch.Flavor { return tpch.StandardSQL{} }

// tpchType is the MariaDB/MySQL type of a TPC-H column (clause 1.3.1).
func tpchType(c tpch.Column) string {
	switch c.Type {
	case tpch.Identifier:
		if c.Wide {
			return "BIGINT"
		}
		return "INT"
	case tpch.Integer:
		return "INT"
	case tpch.Decimal:
		return "DECIMAL(15,2)"
	case tpch.FixedText:
		return fmt.Sprintf("CHAR(%d)", c.Length)
	case tpch.VarText:
		return fmt.Sprintf("VARCHAR(%d)", c.Length)
	case tpch.Date:
		return "DATE"
	}
	return "TEXT"
}

// createTPCHTableSQL creates t with its primary key: InnoDB keeps rows in
// primary-key order, and adding the key after the load would copy the
// table. Text is ASCII compared byte by byte (ascii_bin), so LIKE is
// case-sensitive and ORDER BY sorts as the reference answers do.
func createTPCHTableSQL(t tpch.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.String() + " (")
	for _, c := range t.Columns() {
		b.WriteString(c.Name + " " + tpchType(c) + " NOT NULL, ")
	}
	b.WriteString("PRIMARY KEY (" + strings.Join(t.PrimaryKey(), ", ") + ")")
	b.WriteString(") ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin")
	return b.String()
}

// tpchMetaSQL creates the table that marks the TPC-H schema as oltplab's.
const tpchMetaSQL = "CREATE TABLE " + tpch.MetaTable +
	" (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(256) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin"

// CreateTPCHTables creates the metadata table, then the eight tables with
// their primary keys (DDL commits at once in MariaDB: a failure leaves
// the metadata table, which marks what was created as oltplab's).
func (d *DB) CreateTPCHTables(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, tpchMetaSQL); err != nil {
		return d.wrap("create table "+tpch.MetaTable, err)
	}
	for _, t := range tpch.Tables {
		if _, err := d.db.ExecContext(ctx, createTPCHTableSQL(t)); err != nil {
			return d.wrap("create table "+t.String(), err)
		}
	}
	return nil
}

// DropTPCHSchema drops the eight tables, then the metadata table.
func (d *DB) DropTPCHSchema(ctx context.Context) error {
	names := make([]string, len(tpch.Tables))
	for i, t := range tpch.Tables {
		names[i] = t.String()
	}
	if _, err := d.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(names, ", ")); err != nil {
		return d.wrap("drop tables", err)
	}
	if _, err := d.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tpch.MetaTable); err != nil {
		return d.wrap("drop table "+tpch.MetaTable, err)
	}
	return nil
}

// CreateTPCHIndexes adds the foreign-key indexes no primary key covers,
// one ALTER TABLE per table, two tables at a time.
func (d *DB) CreateTPCHIndexes(ctx context.Context) error {
	perTable := map[tpch.Table][]string{}
	var order []tpch.Table
	for _, fk := range tpch.ForeignKeys {
		if fk.CoveredByPrimaryKey() {
			continue
		}
		if _, ok := perTable[fk.Table]; !ok {
			order = append(order, fk.Table)
		}
		perTable[fk.Table] = append(perTable[fk.Table], fmt.Sprintf("ADD INDEX %s_%s_idx (%s)", fk.Table,
			strings.Join(fk.Columns, "_"), strings.Join(fk.Columns, ", ")))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, t := range order {
		stmt := "ALTER TABLE " + t.String() + " " + strings.Join(perTable[t], ", ")
		g.Go(func() error {
			if _, err := d.db.ExecContext(gctx, stmt); err != nil {
				return d.wrap("index table "+t.String(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// AnalyzeTPCH refreshes InnoDB's statistics of the eight tables.
func (d *DB) AnalyzeTPCH(ctx context.Context) error {
	names := make([]string, len(tpch.Tables))
	for i, t := range tpch.Tables {
		names[i] = t.String()
	}
	rows, err := d.db.QueryContext(ctx, "ANALYZE TABLE "+strings.Join(names, ", "))
	if err != nil {
		return d.wrap("analyze tables", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, op, msgType, msgText sql.NullString
		if err := rows.Scan(&table, &op, &msgType, &msgText); err != nil {
			return d.wrap("analyze tables", err)
		}
		if msgType.String == "error" {
			return d.wrap("analyze tables", fmt.Errorf("%s: %s", table.String, msgText.String))
		}
	}
	return d.wrap("analyze tables", rows.Err())
}

// Sizes of a TPC-H load.
const (
	// tpchChunk: rows travel to LOAD DATA in buffers of this size.
	tpchChunk = 256 << 10
	// tpchStatementBytes ends a LOAD DATA statement (one transaction)
	// after this much input and starts the next, so that no transaction
	// grows with the scale factor.
	tpchStatementBytes = 64 << 20
	// tpchInsertRows is the number of rows of one multi-row INSERT when
	// the server refuses LOCAL INFILE.
	tpchInsertRows = 256
)

func tpchLoadDataSQL(t tpch.Table, reader string) string {
	// dbgen's flat-file text (tpch.Row.AppendTBL): '|' between values,
	// no quoting or escaping.
	return "LOAD DATA LOCAL INFILE 'Reader::" + reader + "' INTO TABLE " + t.String() +
		" CHARACTER SET ascii FIELDS TERMINATED BY '|' ENCLOSED BY '' ESCAPED BY ''" +
		" LINES TERMINATED BY '\\n' (" + strings.Join(t.ColumnNames(), ", ") + ")"
}

// tpchLoader streams each table through LOAD DATA LOCAL INFILE on a
// connection of its own (an ORDERS chunk interleaves orders and line
// items), or, when the server refuses LOCAL INFILE, inserts with
// multi-row INSERTs on one connection.
type tpchLoader struct {
	d       *DB
	mode    loadMode
	streams [tpch.TableCount]*tpchStream
	// Insert mode.
	c    *sql.Conn
	args [tpch.TableCount][]any
	n    [tpch.TableCount]int
}

// tpchStream is one table's connection and its running LOAD DATA.
type tpchStream struct {
	table tpch.Table
	c     *sql.Conn
	pipe  *dialect.Pipe
	done  chan error
	buf   []byte
	sent  int64 // bytes sent to the running statement
	err   error
}

// NewTPCHLoader decides between LOAD DATA and INSERT by loading zero
// rows into REGION, and opens the connection of the INSERT mode.
func (d *DB) NewTPCHLoader(ctx context.Context) (dialect.TPCHLoader, error) {
	c, err := d.openTPCHLoadConn(ctx)
	if err != nil {
		return nil, err
	}
	mode := loadInfile
	if d.forceLoadMode != nil {
		mode = *d.forceLoadMode
	} else {
		name := "oltplab-probe-" + strconv.FormatUint(readerSeq.Add(1), 10)
		mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(nil) })
		_, err := c.ExecContext(ctx, tpchLoadDataSQL(tpch.Region, name))
		mysql.DeregisterReaderHandler(name)
		switch {
		case err == nil:
		case localInfileRefused[errno(err)]:
			d.log.Info("server refuses LOAD DATA LOCAL INFILE; loading with multi-row INSERT", "errno", errno(err))
			mode = loadInsert
		default:
			discard(c)
			return nil, d.wrap("probe LOAD DATA LOCAL INFILE", err)
		}
	}
	l := &tpchLoader{d: d, mode: mode}
	if mode == loadInsert {
		l.c = c
	} else {
		_ = c.Close()
	}
	return l, nil
}

// openTPCHLoadConn opens a load connection without binary logging (where
// the account may turn it off). Unique checks stay on: with unique_checks
// and foreign_key_checks both off, MariaDB inserts into an empty table in
// bulk, under a table lock held until the transaction ends, and the
// other loaders' statements into that table would wait for it
// (innodb_lock_wait_timeout) while it streams. A table's LOAD DATA may
// also wait for input while its loader works on another table's rows
// (ORDERS while LINEITEM's buffer fills, and whatever a loader's caller
// does between rows), and the server drops a connection that waits
// longer than net_read_timeout (30 s by default): load connections wait
// an hour.
func (d *DB) openTPCHLoadConn(ctx context.Context) (*sql.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("open load connection", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION foreign_key_checks = 0, net_read_timeout = 3600"); err != nil {
		discard(c)
		return nil, d.wrap("set load session", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION sql_log_bin = 0"); err != nil {
		d.log.Debug("load keeps binary logging: sql_log_bin may not be changed", "errno", errno(err))
	}
	return c, nil
}

// Add implements dialect.TPCHLoader.
func (l *tpchLoader) Add(ctx context.Context, r tpch.Row) error {
	t := r.Table()
	if l.mode == loadInsert {
		l.args[t] = r.AppendArgs(l.args[t])
		if l.n[t]++; l.n[t] == tpchInsertRows {
			return l.insert(ctx, t)
		}
		return nil
	}
	s := l.streams[t]
	if s == nil {
		c, err := l.d.openTPCHLoadConn(ctx)
		if err != nil {
			return err
		}
		s = &tpchStream{table: t, c: c}
		l.streams[t] = s
	}
	if s.err != nil {
		return s.err
	}
	if s.pipe == nil {
		s.start(ctx)
	}
	s.buf = r.AppendTBL(s.buf)
	if len(s.buf) < tpchChunk-1024 {
		return nil
	}
	if err := s.pipe.Send(s.buf); err != nil {
		return s.end(l.d)
	}
	s.sent += int64(len(s.buf))
	s.buf = s.pipe.Buffer(tpchChunk)
	if s.sent >= tpchStatementBytes {
		return s.end(l.d)
	}
	return nil
}

// start runs a LOAD DATA statement that reads the stream's pipe.
func (s *tpchStream) start(ctx context.Context) {
	s.pipe = dialect.NewPipe(ctx, 4)
	s.done = make(chan error, 1)
	s.buf = s.pipe.Buffer(tpchChunk)
	s.sent = 0
	name := "oltplab-" + s.table.String() + "-" + strconv.FormatUint(readerSeq.Add(1), 10)
	pipe := s.pipe
	mysql.RegisterReaderHandler(name, func() io.Reader { return pipe })
	query := tpchLoadDataSQL(s.table, name)
	go func() {
		_, err := s.c.ExecContext(ctx, query)
		mysql.DeregisterReaderHandler(name)
		pipe.End()
		s.done <- err
	}()
}

// end sends what is buffered, ends the statement's input and waits for
// it; the next row starts another statement.
func (s *tpchStream) end(d *DB) error {
	if s.pipe == nil {
		return s.err
	}
	var err error
	select {
	case err = <-s.done:
		if err == nil {
			err = dialect.ErrPipeEnded
		}
	default:
		if len(s.buf) > 0 {
			_ = s.pipe.Send(s.buf)
		}
		s.pipe.CloseInput()
		err = <-s.done
	}
	s.pipe, s.buf = nil, nil
	if err != nil && s.err == nil {
		s.err = d.wrap("load "+s.table.String(), err)
	}
	return s.err
}

// insert sends the buffered rows of t as one multi-row INSERT.
func (l *tpchLoader) insert(ctx context.Context, t tpch.Table) error {
	n := l.n[t]
	if n == 0 {
		return nil
	}
	cols := t.ColumnNames()
	tuple := "(?" + strings.Repeat(",?", len(cols)-1) + ")"
	stmt := "INSERT INTO " + t.String() + " (" + strings.Join(cols, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+",", n), ",")
	if _, err := l.c.ExecContext(ctx, stmt, l.args[t]...); err != nil {
		return l.d.wrap(fmt.Sprintf("insert %d rows into %s", n, t), err)
	}
	clear(l.args[t])
	l.args[t], l.n[t] = l.args[t][:0], 0
	return nil
}

// Close ends every table's statement (or inserts what is buffered) and
// closes the connections. InnoDB makes each statement durable at its
// commit.
func (l *tpchLoader) Close(ctx context.Context) error {
	var first error
	if l.mode == loadInsert {
		for _, t := range tpch.Tables {
			if err := l.insert(ctx, t); err != nil {
				first = err
				break
			}
		}
		if err := l.c.Close(); first == nil && err != nil {
			first = l.d.wrap("close load connection", err)
		}
		return first
	}
	for _, s := range l.streams {
		if s == nil {
			continue
		}
		if err := s.end(l.d); err != nil && first == nil {
			first = err
		}
		if first != nil {
			discard(s.c)
		} else if err := s.c.Close(); err != nil {
			first = l.d.wrap("close load connection", err)
		}
	}
	return first
}

// tpchSession is one query stream's connection; with no arguments the
// driver sends text queries and reads text results. A statement whose
// context ends is killed on the server (KILL QUERY from another
// connection: the driver itself only closes its connection, and the
// server would run the statement on to its end); the session then goes
// on with a new connection.
type tpchSession struct {
	d  *DB
	c  *sql.Conn
	id int64 // the server's id of c
}

// NewTPCHSession implements dialect.TPCH.
func (d *DB) NewTPCHSession(ctx context.Context) (dialect.TPCHSession, error) {
	s := &tpchSession{d: d}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *tpchSession) open(ctx context.Context) error {
	c, err := s.d.db.Conn(ctx)
	if err != nil {
		return s.d.wrap("open query connection", err)
	}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id); err != nil {
		discard(c)
		return s.d.wrap("open query connection", err)
	}
	s.c = c
	return nil
}

// conn returns the session's connection, opening a new one after a
// statement was killed.
func (s *tpchSession) conn(ctx context.Context) (*sql.Conn, error) {
	if s.c == nil {
		if err := s.open(ctx); err != nil {
			return nil, err
		}
	}
	return s.c, nil
}

// killing kills the statement running on the session's connection when
// ctx ends; done, called once the statement returned, says whether it was
// killed (the connection is then given up).
//
// The context's end and the statement's return race: the driver closes
// the connection as soon as the context ends, and the statement can
// return before the context has started the kill, which stop then
// prevents. So a context that ended is a killed statement whatever stop
// says: the kill is sent then, and the connection given up (used again,
// it would answer "bad connection" to every later statement).
func (s *tpchSession) killing(ctx context.Context) (done func() bool) {
	id := s.id
	kill := func() {
		kctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		_, _ = s.d.db.ExecContext(kctx, "KILL QUERY ?", id)
	}
	stop := context.AfterFunc(ctx, kill)
	return func() bool {
		if stop() {
			if ctx.Err() == nil {
				return false
			}
			go kill()
		}
		discard(s.c)
		s.c = nil
		return true
	}
}

func (s *tpchSession) Exec(ctx context.Context, sql string) error {
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	killed := s.killing(ctx)
	_, err = c.ExecContext(ctx, sql)
	killed()
	return s.d.wrap("run statement", err)
}

// ExecTx runs stmts in one transaction.
func (s *tpchSession) ExecTx(ctx context.Context, stmts []string) ([]int64, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	killed := s.killing(ctx)
	defer killed()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.d.wrap("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	rows := make([]int64, len(stmts))
	for i, st := range stmts {
		r, err := tx.ExecContext(ctx, st)
		if err != nil {
			return nil, s.d.wrap(fmt.Sprintf("statement %d of %d", i+1, len(stmts)), err)
		}
		if rows[i], err = r.RowsAffected(); err != nil {
			return nil, s.d.wrap(fmt.Sprintf("statement %d of %d", i+1, len(stmts)), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, s.d.wrap("commit", err)
	}
	return rows, nil
}

func (s *tpchSession) Query(ctx context.Context, query string) ([][]string, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	killed := s.killing(ctx)
	defer killed()
	rows, err := c.QueryContext(ctx, query)
	if err != nil {
		return nil, s.d.wrap("run query", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, s.d.wrap("run query", err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.d.wrap("run query", err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case []byte:
				row[i] = string(v)
			case time.Time: // the driver parses DATE values (ParseTime)
				row[i] = v.Format(time.DateOnly)
			default:
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	return out, s.d.wrap("run query", rows.Err())
}

func (s *tpchSession) Close() error {
	if s.c == nil {
		return nil
	}
	return s.c.Close()
}
