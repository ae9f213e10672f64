package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/rawconn"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// NewSession opens one virtual user's connection.
func (d *Database) NewSession(ctx context.Context, style dialect.Style) (dialect.Session, error) {
	c, err := d.connectSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s session: %w", style, err)
	}
	switch style {
	case dialect.StyleProcedures:
		return newProcSession(c), nil
	case dialect.StyleClientSQL:
		return newClientSQLSession(c), nil
	}
	_ = c.Close(ctx)
	return nil, fmt.Errorf("open session: unknown style %d", int(style))
}

// connectSession opens a session's connection as connect does, with the
// socket's reads and writes made raw where the platform allows
// (package rawconn), which saves the driver CPU on every round trip,
// unless the target's dialect.Env asks for plain sockets. pgx's own dial
// function, which the raw socket wraps, keeps its connect timeout and
// keep-alives.
func (d *Database) connectSession(ctx context.Context) (*pgx.Conn, error) {
	cfg := d.cfg
	if !d.plainSockets {
		cfg = d.cfg.Copy()
		dial := cfg.DialFunc
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return rawconn.Wrap(c), nil
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: err}
	}
	useFastNumeric(conn)
	return conn, nil
}

// closeTimeout bounds closing a session's connection.
const closeTimeout = 5 * time.Second

// procSession runs each transaction as one call of its PL/pgSQL function
// (procedures.sql) in autocommit: the call is the transaction. It is owned
// by one goroutine.
type procSession struct {
	conn *pgx.Conn
	// arrays holds New-Order's three arrays in PostgreSQL's text form,
	// reused across calls.
	arrays []byte
	n      int32
}

var _ dialect.Interrupter = (*procSession)(nil)

func newProcSession(c *pgx.Conn) *procSession {
	return &procSession{conn: c, arrays: make([]byte, 0, 256)}
}

// appendArray appends the text form of an int[] with one element per order
// line: {v1,v2,...}.
func appendArray(dst []byte, lines []tpcc.OrderLineInput, field func(*tpcc.OrderLineInput) int) []byte {
	dst = append(dst, '{')
	for i := range lines {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(field(&lines[i])), 10)
	}
	return append(dst, '}')
}

func lineIID(l *tpcc.OrderLineInput) int       { return l.IID }
func lineSupplyWID(l *tpcc.OrderLineInput) int { return l.SupplyWID }
func lineQuantity(l *tpcc.OrderLineInput) int  { return l.Quantity }

// NewOrder calls oltplab_new_order (TPC-C 2.4) in autocommit: the call is
// the transaction. An input the terminal chose to roll back (2.4.1.4) runs
// inside BEGIN instead: the function does the work up to the unused item,
// returns NULL, and the session rolls back (2.4.2.3) and returns the bare
// tpcc.ErrRollback, so the expected rollback raises no error and the
// server logs none. An unexpected unused item comes back as SQLSTATE
// RollbackSQLState.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrder) error {
	// The three arrays go as text parameters (pgx sends a string in text
	// format whatever the parameter type): one string for the three, where
	// pgx's binary array encoding allocates per element.
	b := appendArray(s.arrays[:0], in.Lines, lineIID)
	n1 := len(b)
	b = appendArray(b, in.Lines, lineSupplyWID)
	n2 := len(b)
	b = appendArray(b, in.Lines, lineQuantity)
	s.arrays = b
	arrays := string(b)
	allLocal := int32(0)
	if in.AllLocal {
		allLocal = 1
	}
	if in.Rollback {
		err := s.newOrderRollingBack(ctx, int32(in.WID), int32(in.DID), int32(in.CID),
			arrays[:n1], arrays[n1:n2], arrays[n2:], allLocal, in.EntryD)
		if err == nil || errors.Is(err, tpcc.ErrRollback) {
			return err
		}
		return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
	}
	err := s.conn.QueryRow(ctx, newOrderCall, int32(in.WID), int32(in.DID), int32(in.CID),
		arrays[:n1], arrays[n1:n2], arrays[n2:], allLocal, in.EntryD).Scan(nil) // the total amount is terminal output only
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == RollbackSQLState {
		return tpcc.ErrRollback
	}
	return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
}

// newOrderRollingBack runs a New-Order whose input has an unused item
// inside BEGIN ... ROLLBACK (TPC-C 2.4.2.3): tpcc.ErrRollback when the
// function left the rollback to it; a commit, as for any New-Order, in
// the unexpected case that every item was found.
func (s *procSession) newOrderRollingBack(ctx context.Context, args ...any) error {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return err
	}
	var rolledBack bool
	if err := tx.QueryRow(ctx, newOrderRollbackCall, args...).Scan(&rolledBack); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	if rolledBack {
		if err := tx.Rollback(ctx); err != nil {
			return err
		}
		return tpcc.ErrRollback
	}
	return tx.Commit(ctx)
}

// Payment calls oltplab_payment (TPC-C 2.5).
func (s *procSession) Payment(ctx context.Context, in *tpcc.Payment) error {
	err := s.conn.QueryRow(ctx, paymentCall, int32(in.WID), int32(in.DID), int32(in.CWID), int32(in.CDID),
		int32(in.CID), in.ByName, in.CLast, int64(in.Amount), in.HDate).Scan(&s.n)
	if err != nil {
		return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// OrderStatus calls oltplab_order_status (TPC-C 2.6).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error {
	err := s.conn.QueryRow(ctx, orderStatusCall, int32(in.WID), int32(in.DID), int32(in.CID),
		in.ByName, in.CLast).Scan(&s.n)
	if err != nil {
		return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// Delivery calls oltplab_delivery (TPC-C 2.7): ten districts in one
// transaction; in.Skipped receives the districts without a new order.
func (s *procSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	err := s.conn.QueryRow(ctx, deliveryCall, int32(in.WID), int32(in.CarrierID), in.DeliveryD).Scan(&s.n)
	if err != nil {
		return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
	}
	in.Skipped = int(s.n)
	return nil
}

// StockLevel calls oltplab_stock_level (TPC-C 2.8); in.LowStock receives the count.
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevel) error {
	err := s.conn.QueryRow(ctx, stockLevelCall, int32(in.WID), int32(in.DID), int32(in.Threshold)).Scan(&s.n)
	if err != nil {
		return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
	}
	in.LowStock = int(s.n)
	return nil
}

// Interrupt expires the connection's deadline: the call in flight fails
// at once with a timeout (pgx then closes the connection) and so does any
// later one. net.Conn deadlines are safe to set from another goroutine, and
// pgx sets none of its own while the calls' contexts cannot be canceled.
func (s *procSession) Interrupt() {
	_ = s.conn.PgConn().Conn().SetDeadline(time.Now())
}

// Close closes the session's connection.
func (s *procSession) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return s.conn.Close(ctx)
}
