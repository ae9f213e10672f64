package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// NewSession opens one virtual user's own connection: the five procedure
// calls (StyleProcedures) or client-side SQL (StyleClientSQL).
func (d *DB) NewSession(ctx context.Context, style dialect.Style) (dialect.Session, error) {
	sc, err := d.openSessConn(ctx)
	if err != nil {
		return nil, err
	}
	if style == dialect.StyleClientSQL {
		return d.newClientSession(ctx, sc)
	}
	return &procSession{sessConn: sc, buf: make([]byte, 0, 256), order: make([]int, 0, tpcc.MaxOrderLines)}, nil
}

// sessConn is a session's own connection and its socket, which Interrupt
// expires from another goroutine.
type sessConn struct {
	c  *sql.Conn
	nc net.Conn
}

// openSessConn opens a new connection on the sessions' pool, which keeps
// no idle connection and so dials one for every session; the dialer hands
// the session its socket (sessionSocket).
func (d *DB) openSessConn(ctx context.Context) (*sessConn, error) {
	var nc net.Conn
	c, err := d.sessions.Conn(context.WithValue(ctx, sessionSocket{}, &nc))
	if err != nil {
		return nil, d.wrap("open session", err)
	}
	if nc == nil {
		_ = discard(c)
		_ = c.Close()
		return nil, d.wrap("open session", errors.New("the session's connection was not dialed for it"))
	}
	return &sessConn{c: c, nc: nc}, nil
}

// Interrupt expires the socket's deadline: the call in flight, and every
// later one, fails with a timeout (a connection error).
func (s *sessConn) Interrupt() { _ = s.nc.SetDeadline(time.Unix(1, 0)) }

// Close closes the connection for good: it never goes back to a pool.
func (s *sessConn) Close() error {
	_ = discard(s.c)
	err := s.c.Close()
	if errors.Is(err, sql.ErrConnDone) {
		return nil
	}
	return err
}

// procSession runs each transaction as one stored procedure call: an RPC
// whose outputs come back as OUTPUT parameters, one round trip.
type procSession struct {
	*sessConn
	buf   []byte // New-Order's item lists
	order []int  // New-Order's lines in stock key order
}

var (
	_ dialect.Session     = (*procSession)(nil)
	_ dialect.Interrupter = (*procSession)(nil)
)

func boolArg(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// NewOrder calls oltplab_new_order (TPC-C 2.4.2) with the order lines as
// four comma-separated lists (line numbers, items, supply warehouses,
// quantities) in the order of their stock rows' keys, so that New-Orders
// sharing stock rows lock them in one order (procedures.sql). The
// unused-item rollback (2.4.2.3) comes back as @rolled_back = 1, returned
// as tpcc.ErrRollback.
func (s *procSession) NewOrder(ctx context.Context, in *tpcc.NewOrder) error {
	s.order = stockOrder(s.order[:0], in.Lines)
	b := s.buf[:0]
	list := func(f func(l *tpcc.OrderLineInput, n int) int) int {
		for k, i := range s.order {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(f(&in.Lines[i], i+1)), 10)
		}
		return len(b)
	}
	n0 := list(func(_ *tpcc.OrderLineInput, n int) int { return n })
	n1 := list(func(l *tpcc.OrderLineInput, _ int) int { return l.IID })
	n2 := list(func(l *tpcc.OrderLineInput, _ int) int { return l.SupplyWID })
	n3 := list(func(l *tpcc.OrderLineInput, _ int) int { return l.Quantity })
	s.buf = b
	var oID, branded, rolledBack int64
	var total float64
	_, err := s.c.ExecContext(ctx, "oltplab_new_order",
		sql.Named("w_id", int64(in.WID)), sql.Named("d_id", int64(in.DID)), sql.Named("c_id", int64(in.CID)),
		sql.Named("ol_cnt", int64(len(in.Lines))), sql.Named("all_local", boolArg(in.AllLocal)),
		sql.Named("ol_numbers", mssql.VarChar(b[:n0])), sql.Named("i_ids", mssql.VarChar(b[n0:n1])),
		sql.Named("supply_w_ids", mssql.VarChar(b[n1:n2])), sql.Named("quantities", mssql.VarChar(b[n2:n3])),
		sql.Named("entry_d", mssql.DateTime1(in.EntryD)),
		sql.Named("o_id", sql.Out{Dest: &oID}), sql.Named("total", sql.Out{Dest: &total}),
		sql.Named("branded", sql.Out{Dest: &branded}), sql.Named("rolled_back", sql.Out{Dest: &rolledBack}))
	if err != nil {
		return fmt.Errorf("new-order w=%d d=%d: %w", in.WID, in.DID, err)
	}
	if rolledBack == 1 {
		return tpcc.ErrRollback
	}
	return nil
}

// stockOrder appends to dst the indexes of lines sorted by their stock
// row's key (supply warehouse, item), lines of one row in line order.
func stockOrder(dst []int, lines []tpcc.OrderLineInput) []int {
	for i := range lines {
		dst = append(dst, i)
	}
	key := func(i int) (int, int) { return lines[i].SupplyWID, lines[i].IID }
	// Insertion sort: at most 15 lines, stable.
	for i := 1; i < len(dst); i++ {
		for j := i; j > 0; j-- {
			aw, ai := key(dst[j-1])
			bw, bi := key(dst[j])
			if aw < bw || aw == bw && ai <= bi {
				break
			}
			dst[j-1], dst[j] = dst[j], dst[j-1]
		}
	}
	return dst
}

// Payment calls oltplab_payment (TPC-C 2.5.2); the amount goes in cents.
func (s *procSession) Payment(ctx context.Context, in *tpcc.Payment) error {
	var cID int64
	var balance float64
	_, err := s.c.ExecContext(ctx, "oltplab_payment",
		sql.Named("w_id", int64(in.WID)), sql.Named("d_id", int64(in.DID)),
		sql.Named("c_w_id", int64(in.CWID)), sql.Named("c_d_id", int64(in.CDID)), sql.Named("c_id", int64(in.CID)),
		sql.Named("by_name", boolArg(in.ByName)), sql.Named("c_last", mssql.VarChar(in.CLast)),
		sql.Named("amount_cents", int64(in.Amount)), sql.Named("h_date", mssql.DateTime1(in.HDate)),
		sql.Named("c_id_out", sql.Out{Dest: &cID}), sql.Named("c_balance", sql.Out{Dest: &balance}))
	if err != nil {
		return fmt.Errorf("payment w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// OrderStatus calls oltplab_order_status (TPC-C 2.6.2).
func (s *procSession) OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error {
	var cID, oID, lines sql.NullInt64
	var balance sql.NullFloat64
	_, err := s.c.ExecContext(ctx, "oltplab_order_status",
		sql.Named("w_id", int64(in.WID)), sql.Named("d_id", int64(in.DID)), sql.Named("by_name", boolArg(in.ByName)),
		sql.Named("c_last", mssql.VarChar(in.CLast)), sql.Named("c_id", int64(in.CID)),
		sql.Named("c_id_out", sql.Out{Dest: &cID}), sql.Named("c_balance", sql.Out{Dest: &balance}),
		sql.Named("o_id", sql.Out{Dest: &oID}), sql.Named("lines", sql.Out{Dest: &lines}))
	if err != nil {
		return fmt.Errorf("order-status w=%d d=%d: %w", in.WID, in.DID, err)
	}
	return nil
}

// Delivery calls oltplab_delivery (TPC-C 2.7.4); in.Skipped receives the
// number of districts without an undelivered order.
func (s *procSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	var skipped int64
	_, err := s.c.ExecContext(ctx, "oltplab_delivery",
		sql.Named("w_id", int64(in.WID)), sql.Named("carrier_id", int64(in.CarrierID)),
		sql.Named("delivery_d", mssql.DateTime1(in.DeliveryD)), sql.Named("skipped", sql.Out{Dest: &skipped}))
	if err != nil {
		return fmt.Errorf("delivery w=%d carrier=%d: %w", in.WID, in.CarrierID, err)
	}
	in.Skipped = int(skipped)
	return nil
}

// StockLevel calls oltplab_stock_level (TPC-C 2.8.2); in.LowStock
// receives the count.
func (s *procSession) StockLevel(ctx context.Context, in *tpcc.StockLevel) error {
	var low int64
	_, err := s.c.ExecContext(ctx, "oltplab_stock_level",
		sql.Named("w_id", int64(in.WID)), sql.Named("d_id", int64(in.DID)), sql.Named("threshold", int64(in.Threshold)),
		sql.Named("low", sql.Out{Dest: &low}))
	if err != nil {
		return fmt.Errorf("stock-level w=%d d=%d: %w", in.WID, in.DID, err)
	}
	in.LowStock = int(low)
	return nil
}
