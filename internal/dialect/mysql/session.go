package mysql

import (
	"context"
	"database/sql"
	"errors"
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
	c     *sql.Conn
	nc    net.Conn // c's socket, for Interrupt
	calls [tpcc.NumTxKinds]*sql.Stmt
	buf   []byte // New-Order's item lists
}

var (
	_ dialect.Session     = (*procSession)(nil)
	_ dialect.Interrupter = (*procSession)(nil)
)

// dialedKey is the context key under which newProcSession asks the
// sessions' dial function for the socket it dials.
type dialedKey struct{}

// sessionDialer is the dial function of the sessions' pool (DB.sessDB):
// it dials as the driver would, within the configured connect timeout
// (which the driver also puts on ctx), makes the socket's reads and writes
// raw where the platform allows when raw is set (package rawconn), which
// saves the driver CPU on every round trip, and hands the socket to the
// session that asked for it through ctx.
//
// A raw socket hides syscall.Conn, which turns off the driver's liveness
// check of a pooled connection before reuse (CheckConnLiveness): sessDB
// keeps no idle connection, so a session's connection is never reused.
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
	var nc net.Conn
	c, err := d.sessDB.Conn(context.WithValue(ctx, dialedKey{}, &nc))
	if err != nil {
		return nil, d.wrap("open session", err)
	}
	if nc == nil {
		// sessDB keeps no idle connection, so this does not happen.
		discard(c)
		return nil, d.wrap("open session", errors.New("the session's connection was not dialed for it"))
	}
	s := &procSession{d: d, c: c, nc: nc, buf: make([]byte, 0, 256)}
	for k, q := range callSQL {
		if s.calls[k], err = c.PrepareContext(ctx, q); err != nil {
			discard(c)
			return nil, d.wrap("prepare "+tpcc.TxKind(k).String()+" call", err)
		}
	}
	return s, nil
}

func (s *procSession) call(ctx context.Context, k tpcc.TxKind, args ...any) *sql.Row {
	if s.d.callText {
		return s.c.QueryRowContext(ctx, callSQL[k], args...)
	}
	return s.calls[k].QueryRowContext(ctx, args...)
}

// Interrupt expires the connection's deadline: the call in flight fails
// at once with a timeout (the driver then closes the connection) and so
// does any later one. net.Conn deadlines are safe to set from another
// goroutine, and the driver sets none of its own (no ReadTimeout or
// WriteTimeout in config) nor watches the calls' contexts when they
// cannot be canceled.
func (s *procSession) Interrupt() {
	_ = s.nc.SetDeadline(time.Now())
}

// Close releases the prepared statements with the connection.
func (s *procSession) Close() error {
	for _, st := range s.calls {
		if st != nil {
			st.Close()
		}
	}
	return discard(s.c)
}

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
	err := s.call(ctx, tpcc.NewOrderTx,
		int64(in.WID), int64(in.DID), int64(in.CID), int64(len(in.Lines)), boolArg(in.AllLocal),
		b[:n1], b[n1:n2], b[n2:], in.EntryD).Scan(&oID, &total, &branded)
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
	err := s.call(ctx, tpcc.PaymentTx,
		int64(in.WID), int64(in.DID), int64(in.CWID), int64(in.CDID), int64(in.CID),
		boolArg(in.ByName), in.CLast, int64(in.Amount), in.HDate).Scan(&cID, &balance)
	if err != nil {
		return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// OrderStatus calls oltplab_order_status (TPC-C 2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error {
	var cID, lines int64
	var balance float64
	var oID sql.NullInt64
	err := s.call(ctx, tpcc.OrderStatusTx,
		int64(in.WID), int64(in.DID), boolArg(in.ByName), in.CLast, int64(in.CID)).Scan(&cID, &balance, &oID, &lines)
	if err != nil {
		return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// Delivery calls oltplab_delivery (TPC-C 2.7.4); in.Skipped receives the
// number of districts without an undelivered order.
func (s *procSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	var skipped int64
	err := s.call(ctx, tpcc.DeliveryTx,
		int64(in.WID), int64(in.CarrierID), in.DeliveryD).Scan(&skipped)
	if err != nil {
		return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
	}
	in.Skipped = int(skipped)
	return nil
}

// StockLevel calls oltplab_stock_level (TPC-C 2.8.2); in.LowStock receives the count.
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevel) error {
	var low int64
	err := s.call(ctx, tpcc.StockLevelTx,
		int64(in.WID), int64(in.DID), int64(in.Threshold)).Scan(&low)
	if err != nil {
		return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
	}
	in.LowStock = int(low)
	return nil
}
