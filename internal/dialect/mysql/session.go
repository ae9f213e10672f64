package mysql

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/rawconn"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// NewSession opens one virtual user's dedicated connection and prepares
// its statements once: the five CALLs (StyleProcedures) or every
// client-side statement (StyleClientSQL).
func (d *DB) NewSession(ctx context.Context, style dialect.Style) (dialect.Session, error) {
	if style == dialect.StyleClientSQL {
		return d.newClientSession(ctx)
	}
	return d.newProcSession(ctx)
}

// The five CALLs, indexed by tpcc.TxKind.
var callSQL = [tpcc.NumTxKinds]string{
	tpcc.NewOrderTx:    "CALL oltplab_new_order(?, ?, ?, ?, ?, ?, ?, ?, ?)",
	tpcc.PaymentTx:     "CALL oltplab_payment(?, ?, ?, ?, ?, ?, ?, ?, ?)",
	tpcc.OrderStatusTx: "CALL oltplab_order_status(?, ?, ?, ?, ?)",
	tpcc.DeliveryTx:    "CALL oltplab_delivery(?, ?, ?)",
	tpcc.StockLevelTx:  "CALL oltplab_stock_level(?, ?, ?)",
}

// procSession runs each transaction as one CALL, one round trip: the
// procedure commits and returns its outputs as one row.
type procSession struct {
	d     *DB
	c     *sessConn
	calls [tpcc.NumTxKinds]driver.Stmt
	buf   []byte // New-Order's item lists
	// text is a CALL as text (DB.callText), its strings escaped for the
	// session's sql_mode.
	text               []byte
	noBackslashEscapes bool
}

var (
	_ dialect.Session     = (*procSession)(nil)
	_ dialect.Interrupter = (*procSession)(nil)
)

// dialedKey is the context key under which newProcSession asks the
// sessions' dial function for the socket it dials.
type dialedKey struct{}

// sessionDialer is the dial function of the sessions' connector
// (DB.sessions): it dials as the driver would, within the configured
// connect timeout (which the driver also puts on ctx), makes the socket's
// reads and writes raw where the platform allows when raw is set (package
// rawconn), which saves the driver CPU on every round trip, and hands the
// socket to the session that asked for it through ctx.
//
// A raw socket hides syscall.Conn, which turns off the driver's liveness
// check of a pooled connection before reuse (CheckConnLiveness): a
// session's connection is never pooled (sessConn).
func sessionDialer(raw bool, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialer := net.Dialer{Timeout: timeout}
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			// The driver enables keep-alives on a *net.TCPConn only.
			_ = tc.SetKeepAlive(true)
		}
		if raw {
			c = rawconn.Wrap(c)
		}
		if p, ok := ctx.Value(dialedKey{}).(*net.Conn); ok {
			*p = c
		}
		return c, nil
	}
}

func (d *DB) newProcSession(ctx context.Context) (*procSession, error) {
	c, err := d.openSessConn(ctx)
	if err != nil {
		return nil, err
	}
	s := &procSession{d: d, c: c, buf: make([]byte, 0, 256)}
	if d.callText {
		if s.noBackslashEscapes, err = c.noBackslashEscapes(ctx); err != nil {
			c.close()
			return nil, d.wrap("read sql_mode", err)
		}
	}
	for k, q := range callSQL {
		if s.calls[k], err = c.prepare(ctx, q); err != nil {
			c.close()
			return nil, d.wrap("prepare "+tpcc.TxKind(k).String()+" call", err)
		}
	}
	return s, nil
}

// call runs the CALL of k with args and reads its one row into dest.
func (s *procSession) call(ctx context.Context, k tpcc.TxKind, dest []any, args ...any) error {
	var rows driver.Rows
	var err error
	if s.d.callText {
		s.text, err = interpolate(s.text[:0], callSQL[k], args, s.noBackslashEscapes)
		if err == nil {
			rows, err = s.c.query(ctx, string(s.text))
		}
	} else {
		rows, err = s.c.queryStmt(ctx, s.calls[k], args...)
	}
	if err != nil {
		return err
	}
	return s.c.firstRow(rows, dest...)
}

// Interrupt expires the connection's deadline (sessConn.interrupt).
func (s *procSession) Interrupt() { s.c.interrupt() }

// Close closes the connection, and with it the prepared statements.
func (s *procSession) Close() error { return s.c.close() }

func boolArg(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// NewOrder calls oltplab_new_order (TPC-C 2.4.2) with the order lines as
// three comma-separated lists. The unused-item rollback (2.4.2.3) comes
// back as error 30001, returned as tpcc.ErrRollback.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrder) error {
	b := s.buf[:0]
	for i := range in.Lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(in.Lines[i].IID), 10)
	}
	n1 := len(b)
	for i := range in.Lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(in.Lines[i].SupplyWID), 10)
	}
	n2 := len(b)
	for i := range in.Lines {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(in.Lines[i].Quantity), 10)
	}
	s.buf = b
	var oID, branded int64
	var total float64
	err := s.call(ctx, tpcc.NewOrderTx, []any{&oID, &total, &branded},
		int64(in.WID), int64(in.DID), int64(in.CID), int64(len(in.Lines)), boolArg(in.AllLocal),
		b[:n1], b[n1:n2], b[n2:], in.EntryD)
	if err == nil {
		return nil
	}
	if errno(err) == errnoRollback {
		return tpcc.ErrRollback
	}
	return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
}

// Payment calls oltplab_payment (TPC-C 2.5.2); the amount goes in cents.
func (s *procSession) Payment(ctx context.Context, in *tpcc.Payment) error {
	var cID int64
	var balance float64
	err := s.call(ctx, tpcc.PaymentTx, []any{&cID, &balance},
		int64(in.WID), int64(in.DID), int64(in.CWID), int64(in.CDID), int64(in.CID),
		boolArg(in.ByName), in.CLast, int64(in.Amount), in.HDate)
	if err != nil {
		return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// OrderStatus calls oltplab_order_status (TPC-C 2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error {
	var cID, lines int64
	var balance float64
	var oID any // NULL when the customer has no order
	err := s.call(ctx, tpcc.OrderStatusTx, []any{&cID, &balance, &oID, &lines},
		int64(in.WID), int64(in.DID), boolArg(in.ByName), in.CLast, int64(in.CID))
	if err != nil {
		return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// Delivery calls oltplab_delivery (TPC-C 2.7.4); in.Skipped receives the
// number of districts without an undelivered order.
func (s *procSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	var skipped int64
	err := s.call(ctx, tpcc.DeliveryTx, []any{&skipped},
		int64(in.WID), int64(in.CarrierID), in.DeliveryD)
	if err != nil {
		return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
	}
	in.Skipped = int(skipped)
	return nil
}

// StockLevel calls oltplab_stock_level (TPC-C 2.8.2); in.LowStock receives the count.
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevel) error {
	var low int64
	err := s.call(ctx, tpcc.StockLevelTx, []any{&low},
		int64(in.WID), int64(in.DID), int64(in.Threshold))
	if err != nil {
		return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
	}
	in.LowStock = int(low)
	return nil
}
