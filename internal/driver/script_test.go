package driver

import (
	"context"
	"errors"
	"sync"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// scriptedSession stands in for a database session in tests of the
// driver's own scheduling, never of a database's behaviour: each call
// runs the test's function for its kind (nil: return at once). Inside a
// testing/synctest bubble a function that sleeps takes fake time.
type scriptedSession struct {
	call     func(ctx context.Context, kind tpcc.TxKind) error
	delivery func(ctx context.Context, in *tpcc.Delivery) error
}

func (s *scriptedSession) run(ctx context.Context, k tpcc.TxKind) error {
	if s.call == nil {
		return nil
	}
	return s.call(ctx, k)
}

func (s *scriptedSession) NewOrder(ctx context.Context, _ *tpcc.NewOrder) error {
	return s.run(ctx, tpcc.NewOrderTx)
}
func (s *scriptedSession) Payment(ctx context.Context, _ *tpcc.Payment) error {
	return s.run(ctx, tpcc.PaymentTx)
}
func (s *scriptedSession) OrderStatus(ctx context.Context, _ *tpcc.OrderStatus) error {
	return s.run(ctx, tpcc.OrderStatusTx)
}
func (s *scriptedSession) Delivery(ctx context.Context, in *tpcc.Delivery) error {
	if s.delivery != nil {
		return s.delivery(ctx, in)
	}
	return s.run(ctx, tpcc.DeliveryTx)
}
func (s *scriptedSession) StockLevel(ctx context.Context, _ *tpcc.StockLevel) error {
	return s.run(ctx, tpcc.StockLevelTx)
}
func (s *scriptedSession) Close() error { return nil }

// blockingSession blocks every call until Interrupt, as a session whose
// server stopped answering; it is a dialect.Interrupter.
type blockingSession struct {
	scriptedSession
	once        sync.Once
	interrupted chan struct{}
	calls       chan context.Context // each call's context, as it starts
}

var _ dialect.Interrupter = (*blockingSession)(nil)

var errInterrupted = errors.New("interrupted")

func newBlockingSession() *blockingSession {
	b := &blockingSession{interrupted: make(chan struct{}), calls: make(chan context.Context, 16)}
	block := func(ctx context.Context) error {
		b.calls <- ctx
		<-b.interrupted
		return errInterrupted
	}
	b.call = func(ctx context.Context, _ tpcc.TxKind) error { return block(ctx) }
	b.delivery = func(ctx context.Context, _ *tpcc.Delivery) error { return block(ctx) }
	return b
}

func (b *blockingSession) Interrupt() { b.once.Do(func() { close(b.interrupted) }) }
