package driver

import (
	"container/heap"
	"context"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// pacer runs the terminal cycle of the tpc-c mode (TPC-C 5.2.5): a
// terminal selects a transaction from the menu (its deck, 5.2.4.2), keys
// its input for the kind's keying time, sends it and waits for the output
// (the response time), then thinks for a think time drawn for that kind,
// and selects again. While terminals key and think the pacer holds them
// in one heap ordered by the moment their input is sent (due); one
// goroutine sleeps until the earliest and hands every due terminal to the
// session pool (ready). Thousands of waiting terminals cost a heap entry
// each, no goroutine and no timer.
type pacer struct {
	clk  clock
	gate *gate

	mu   sync.Mutex
	heap termHeap // under mu

	// wake tells the pacer a terminal now comes due before the one it
	// sleeps for; ready holds due terminals until a session is free (its
	// capacity is the terminal count: the pacer never blocks on it).
	wake  chan struct{}
	ready chan *terminal

	// lag is how late the pacer handed due terminals over, in the
	// measured window: the driver's own lateness. Only run writes it; it
	// is read after run returned.
	lag *hdrhistogram.Histogram
}

// newPacer schedules terms, which have just been created, from start:
// each selects its first transaction at a moment spread uniformly over
// one mean cycle (so that the terminals do not all key at once; the
// ramp-up absorbs the start), then keys it.
func newPacer(clk clock, g *gate, terms []*terminal, start time.Time) *pacer {
	p := &pacer{
		clk:   clk,
		gate:  g,
		heap:  make(termHeap, 0, len(terms)),
		wake:  make(chan struct{}, 1),
		ready: make(chan *terminal, len(terms)),
		lag:   newSecondHistogram(),
	}
	cycleMillis := int(tpcc.MeanCycle() / time.Millisecond)
	for _, t := range terms {
		t.kind = t.term.NextKind()
		offset := time.Duration(t.rand.Uniform(0, cycleMillis-1)) * time.Millisecond
		t.due = start.Add(offset + tpcc.KeyingTime(t.kind))
		t.index = len(p.heap)
		p.heap = append(p.heap, t)
	}
	heap.Init(&p.heap)
	return p
}

// run hands due terminals to the pool until the window ends or ctx is
// canceled.
func (p *pacer) run(ctx context.Context) {
	for {
		now := p.clk.Now()
		measuring := p.gate.measuring.Load()
		wait := time.Duration(-1)
		p.mu.Lock()
		for len(p.heap) > 0 && !p.heap[0].due.After(now) {
			t := heap.Pop(&p.heap).(*terminal)
			t.dispatched = now
			if measuring {
				_ = p.lag.RecordValue(micros(now.Sub(t.due)))
			}
			p.ready <- t
		}
		if len(p.heap) > 0 {
			wait = p.heap[0].due.Sub(now)
		}
		p.mu.Unlock()

		var timer <-chan time.Time
		stop := func() {}
		if wait >= 0 {
			timer, stop = p.clk.NewTimer(wait)
		}
		select {
		case <-timer:
		case <-p.wake:
		case <-p.gate.stopC:
			stop()
			return
		case <-ctx.Done():
			stop()
			return
		}
		stop()
	}
}

// again puts back a terminal whose transaction ended at end: it thinks
// (TPC-C 5.2.5.4, a think time drawn for the kind that ended), selects
// its next transaction from the menu and keys it (5.2.5.2); its input is
// due then. It is called by the session that ran the transaction.
func (p *pacer) again(t *terminal, end time.Time) {
	think := t.rand.ThinkTime(t.kind)
	t.kind = t.term.NextKind()
	t.due = end.Add(think + tpcc.KeyingTime(t.kind))
	t.dispatched = time.Time{}
	p.mu.Lock()
	heap.Push(&p.heap, t)
	first := t.index == 0
	p.mu.Unlock()
	if first {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// termHeap orders terminals by due time (container/heap).
type termHeap []*terminal

func (h termHeap) Len() int           { return len(h) }
func (h termHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h termHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *termHeap) Push(x any) {
	t := x.(*terminal)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *termHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	t.index = -1
	return t
}
