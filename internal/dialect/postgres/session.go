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

// NewSession opens one virtual user's session: pgx opens the connection
// (sessionConn), over which the session then speaks to the server itself
// (wireConn).
func (d *Database) NewSession(ctx context.Context, style dialect.Style) (dialect.Session, error) {
	if style != dialect.StyleProcedures && style != dialect.StyleClientSQL {
		return nil, fmt.Errorf("open session: unknown style %d", int(style))
	}
	w, err := d.sessionConn(ctx, style)
	if err != nil {
		return nil, fmt.Errorf("open %s session: %w", style, err)
	}
	if style == dialect.StyleProcedures {
		return newProcSession(w), nil
	}
	return newClientSQLSession(w), nil
}

// sessionConn opens a session's connection as connect does, with the
// socket's reads and writes made raw where the platform allows (package
// rawconn), which saves the driver CPU on every round trip, unless the
// target's dialect.Env asks for plain sockets; then takes it over from
// pgx. pgx's own dial function, which the raw socket wraps, keeps its
// connect timeout and keep-alives. The session's DateStyle is ISO, the
// form in which wireConn reads timestamps. A client-SQL session's
// statements keep their generic plans (plan_cache_mode): the plan cache
// would otherwise plan each statement five times per connection before
// settling on its generic plan, and kept planning Stock-Level's count at
// every call, its estimates depending on D_NEXT_O_ID (0.3 ms of server
// CPU a call); with the count's array form (clientSQLOptions), every
// statement's generic plan is the plan it settled on.
func (d *Database) sessionConn(ctx context.Context, style dialect.Style) (*wireConn, error) {
	cfg := d.cfg.Copy()
	cfg.RuntimeParams["DateStyle"] = "ISO"
	if style == dialect.StyleClientSQL {
		cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	if !d.plainSockets {
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
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: connectCause(cfg, err)}
	}
	pc := conn.PgConn()
	if err := pc.SyncConn(ctx); err != nil {
		_ = conn.Close(ctx)
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: err}
	}
	hc, err := pc.Hijack()
	if err != nil {
		_ = conn.Close(ctx)
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: err}
	}
	_ = hc.Conn.SetDeadline(time.Time{})
	return newWireConn(hc.Conn), nil
}

// closeTimeout bounds closing a session's connection.
const closeTimeout = 5 * time.Second

// procSession runs each transaction as one call of its PL/pgSQL function
// (procedures.sql) in autocommit: the call is the transaction, one round
// trip. It is owned by one goroutine.
type procSession struct {
	w     *wireConn
	stmts procStmts
	// arrays holds New-Order's three arrays in PostgreSQL's text form,
	// reused across calls.
	arrays []byte
	n      int64 // a call's integer result
}

// procStmts are the statements of a procedure session, each prepared on
// the session's connection under its name the first time it is used.
type procStmts struct {
	newOrder, newOrderRollback, payment, orderStatus, delivery, stockLevel wireStmt
	begin, commit, rollback                                                wireStmt
}

var _ dialect.Interrupter = (*procSession)(nil)

// newProcSession runs the transactions' functions over w.
func newProcSession(w *wireConn) *procSession {
	return &procSession{
		w: w,
		stmts: procStmts{
			newOrder:         wireStmt{name: "oltplab_new_order", sql: newOrderCall},
			newOrderRollback: wireStmt{name: "oltplab_new_order_rollback", sql: newOrderRollbackCall},
			payment:          wireStmt{name: "oltplab_payment", sql: paymentCall},
			orderStatus:      wireStmt{name: "oltplab_order_status", sql: orderStatusCall},
			delivery:         wireStmt{name: "oltplab_delivery", sql: deliveryCall},
			stockLevel:       wireStmt{name: "oltplab_stock_level", sql: stockLevelCall},
			begin:            wireStmt{name: "oltplab_begin", sql: "BEGIN"},
			commit:           wireStmt{name: "oltplab_commit", sql: "COMMIT"},
			rollback:         wireStmt{name: "oltplab_rollback", sql: "ROLLBACK"},
		},
		arrays: make([]byte, 0, 256),
	}
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

// call sends the statements built in s.w and reads the first row of the
// last one into dest (see wireConn.roundTrip). A transaction left open by
// an error is rolled back.
func (s *procSession) call(ctx context.Context, dest ...any) error {
	err := s.w.roundTrip(ctx, dest...)
	if err != nil && s.w.broken == nil && s.w.txStatus != 'I' {
		s.w.bind(&s.stmts.rollback)
		s.w.execute()
		if rerr := s.w.roundTrip(context.WithoutCancel(ctx)); rerr != nil && s.w.broken != nil {
			return fmt.Errorf("%w (rollback also failed: %w)", err, rerr)
		}
	}
	return err
}

// NewOrder calls oltplab_new_order (TPC-C 2.4) in autocommit: the call is
// the transaction. An input the terminal chose to roll back (2.4.1.4) runs
// inside BEGIN instead: the function does the work up to the unused item,
// returns NULL, and the session rolls back (2.4.2.3) and returns the bare
// tpcc.ErrRollback, so the expected rollback raises no error and the
// server logs none. An unexpected unused item comes back as SQLSTATE
// RollbackSQLState.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrder) error {
	// The three arrays go as text parameters, as every parameter does.
	b := appendArray(s.arrays[:0], in.Lines, lineIID)
	n1 := len(b)
	b = appendArray(b, in.Lines, lineSupplyWID)
	n2 := len(b)
	b = appendArray(b, in.Lines, lineQuantity)
	s.arrays = b
	w := s.w
	if in.Rollback {
		w.bind(&s.stmts.begin)
		w.execute()
		w.bind(&s.stmts.newOrderRollback)
	} else {
		w.bind(&s.stmts.newOrder)
	}
	w.paramInt(int64(in.WID))
	w.paramInt(int64(in.DID))
	w.paramInt(int64(in.CID))
	w.paramBytes(b[:n1])
	w.paramBytes(b[n1:n2])
	w.paramBytes(b[n2:])
	allLocal := int64(0)
	if in.AllLocal {
		allLocal = 1
	}
	w.paramInt(allLocal)
	w.paramTimestamp(in.EntryD)
	w.execute()
	if !in.Rollback {
		// The total amount is terminal output only: not decoded.
		err := s.call(ctx)
		if err == nil {
			return nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == RollbackSQLState {
			return tpcc.ErrRollback
		}
		return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
	}
	err := s.endNewOrderRollingBack(ctx)
	if err == nil || errors.Is(err, tpcc.ErrRollback) {
		return err
	}
	return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
}

// endNewOrderRollingBack sends BEGIN and the call built in s.w, then ends
// the transaction (TPC-C 2.4.2.3): ROLLBACK and tpcc.ErrRollback when the
// function found the unused item and left the rollback to it; COMMIT, as
// for any New-Order, in the unexpected case that every item was found.
func (s *procSession) endNewOrderRollingBack(ctx context.Context) error {
	var rolledBack bool
	if err := s.call(ctx, &rolledBack); err != nil {
		return err
	}
	end := &s.stmts.commit
	if rolledBack {
		end = &s.stmts.rollback
	}
	s.w.bind(end)
	s.w.execute()
	if err := s.call(ctx); err != nil {
		return err
	}
	if rolledBack {
		return tpcc.ErrRollback
	}
	return nil
}

// Payment calls oltplab_payment (TPC-C 2.5).
func (s *procSession) Payment(ctx context.Context, in *tpcc.Payment) error {
	w := s.w
	w.bind(&s.stmts.payment)
	w.paramInt(int64(in.WID))
	w.paramInt(int64(in.DID))
	w.paramInt(int64(in.CWID))
	w.paramInt(int64(in.CDID))
	w.paramInt(int64(in.CID))
	w.paramAny(in.ByName)
	w.paramText(in.CLast)
	w.paramInt(int64(in.Amount))
	w.paramTimestamp(in.HDate)
	w.execute()
	if err := s.call(ctx, &s.n); err != nil {
		return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// OrderStatus calls oltplab_order_status (TPC-C 2.6).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error {
	w := s.w
	w.bind(&s.stmts.orderStatus)
	w.paramInt(int64(in.WID))
	w.paramInt(int64(in.DID))
	w.paramInt(int64(in.CID))
	w.paramAny(in.ByName)
	w.paramText(in.CLast)
	w.execute()
	if err := s.call(ctx, &s.n); err != nil {
		return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// Delivery calls oltplab_delivery (TPC-C 2.7): ten districts in one
// transaction; in.Skipped receives the districts without a new order.
func (s *procSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	w := s.w
	w.bind(&s.stmts.delivery)
	w.paramInt(int64(in.WID))
	w.paramInt(int64(in.CarrierID))
	w.paramTimestamp(in.DeliveryD)
	w.execute()
	if err := s.call(ctx, &s.n); err != nil {
		return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
	}
	in.Skipped = int(s.n)
	return nil
}

// StockLevel calls oltplab_stock_level (TPC-C 2.8); in.LowStock receives the count.
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevel) error {
	w := s.w
	w.bind(&s.stmts.stockLevel)
	w.paramInt(int64(in.WID))
	w.paramInt(int64(in.DID))
	w.paramInt(int64(in.Threshold))
	w.execute()
	if err := s.call(ctx, &s.n); err != nil {
		return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
	}
	in.LowStock = int(s.n)
	return nil
}

// Interrupt expires the connection's deadline: the call in flight fails
// at once with a timeout and so does any later one.
func (s *procSession) Interrupt() { s.w.interrupt() }

// Close ends the session and closes its connection.
func (s *procSession) Close() error { return s.w.close() }
