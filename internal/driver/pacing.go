package driver

import (
	"slices"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Pacing is how a paced run (a rate, or the terminals of the tpc-c mode)
// scheduled its transactions and how late they started against the
// schedule. Every figure covers the measured window.
type Pacing struct {
	// Terminals, Sessions and DeliverySessions (tpc-c): the terminals, the
	// pool they share and the sessions of the deferred Deliveries.
	Terminals        int `json:"terminals,omitempty"`
	Sessions         int `json:"sessions,omitempty"`
	DeliverySessions int `json:"delivery_sessions,omitempty"`
	// RatePerVU and OfferedTPM (tproc-c at a rate): the schedule of each
	// virtual user and the load offered by all, whatever the server did.
	RatePerVU  float64 `json:"rate_per_vu,omitempty"`
	OfferedTPM float64 `json:"offered_tpm,omitempty"`

	// StartLagMicros is from each transaction's intended start to the
	// moment its session was asked: the driver's own lateness, the wait
	// for a pooled session (tpc-c), and a user's backlog behind a slow
	// server (rate). It is inside every response time.
	StartLagMicros Latency `json:"start_lag_micros"`
	// DispatchLagMicros (tpc-c) is how late the pacer handed due terminals
	// to the pool: the driver's scheduling lag alone.
	DispatchLagMicros *Latency `json:"dispatch_lag_micros,omitempty"`
	// SessionWaitMicros (tpc-c) is how long a due terminal waited for a
	// free session of the pool.
	SessionWaitMicros *Latency `json:"session_wait_micros,omitempty"`

	// TerminalBytes (tpc-c) is the memory allocated per terminal when the
	// run set them up (terminals hold no session and no histogram).
	TerminalBytes float64 `json:"terminal_bytes,omitempty"`
	// CPUMicrosPerUserSecond is the driver's CPU per terminal (or virtual
	// user) per second of the window: DriverCPUCores over the users, in
	// microseconds per second.
	CPUMicrosPerUserSecond float64 `json:"cpu_micros_per_user_second"`
}

// DeferredDelivery is what the deferred Deliveries of the tpc-c mode
// measured (TPC-C 2.7.2): those whose execution ended in the window.
type DeferredDelivery struct {
	Sessions  int              `json:"sessions"`
	Completed int64            `json:"completed"`
	Retried   int64            `json:"retried"`
	Failed    map[string]int64 `json:"failed"`
	// SkippedDistricts counts districts with no undelivered order
	// (2.7.4.2); WithSkipped the Deliveries that skipped at least one,
	// which 2.7.4.2 asks to report when over 1% of them (or over one).
	SkippedDistricts int64 `json:"skipped_districts"`
	WithSkipped      int64 `json:"with_skipped"`
	// QueueMicros is from queued to the start of execution;
	// CompletionMicros from queued to completed, whose 90th percentile
	// must be within 80 s (2.7.2, 5.2.5.7). Late counts completions over
	// 80 s.
	QueueMicros      Latency `json:"queue_micros"`
	CompletionMicros Latency `json:"completion_micros"`
	Late             int64   `json:"late"`
	// BacklogAtEnd is the requests still queued when the window ended;
	// LateInBacklog those of them already queued for more than 80 s,
	// which count against the constraint as late completions would.
	BacklogAtEnd  int64 `json:"backlog_at_end"`
	LateInBacklog int64 `json:"late_in_backlog"`
	// Records is the result file of 2.7.2.3, one line per Delivery (the
	// order numbers delivered per district are not reported by the
	// sessions); RecordsDropped counts those beyond the bound per session.
	Records        []DeliveryRecord `json:"records"`
	RecordsDropped int64            `json:"records_dropped"`
}

// DeliveryRecord is one deferred Delivery: when it was queued (since the
// window's start), its warehouse and carrier, how long it waited in the
// queue, when it completed after being queued, and the districts it
// skipped.
type DeliveryRecord struct {
	QueuedMillis     float64 `json:"queued_ms"`
	WID              int     `json:"w_id"`
	CarrierID        int     `json:"carrier_id"`
	QueueMillis      float64 `json:"queue_ms"`
	CompletionMillis float64 `json:"completion_ms"`
	SkippedDistricts int     `json:"skipped_districts"`
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mergePacing fills Pacing from the sessions' statistics and, in the
// tpc-c mode, the pacer's.
func (r *Result) mergePacing(stats []*vuStats, p *pacer, terminalBytes float64) {
	o := r.Options
	pc := &Pacing{}
	start := newSecondHistogram()
	for _, s := range stats {
		start.Merge(s.startLag)
	}
	pc.StartLagMicros = summarise(start)
	if o.Mode == ModeTPCC {
		pc.Terminals, pc.Sessions, pc.DeliverySessions = o.Terminals, o.Sessions, o.DeliverySessions
		wait := newSecondHistogram()
		for _, s := range stats {
			wait.Merge(s.sessionWait)
		}
		sw := summarise(wait)
		pc.SessionWaitMicros = &sw
		if p != nil {
			dl := summarise(p.lag)
			pc.DispatchLagMicros = &dl
		}
		pc.TerminalBytes = terminalBytes
	} else {
		pc.RatePerVU = o.Rate
		pc.OfferedTPM = float64(o.VUs) * o.Rate * 60
	}
	if users := o.Users(); users > 0 {
		pc.CPUMicrosPerUserSecond = r.DriverCPUCores * 1e6 / float64(users)
	}
	r.Pacing = pc
}

// mergeDeferred fills Deferred from the delivery sessions' statistics and
// the queue's backlog at the window's end.
func (r *Result) mergeDeferred(stats []*vuStats, backlog, lateInBacklog int64) {
	d := &DeferredDelivery{Sessions: r.Options.DeliverySessions, Failed: map[string]int64{},
		BacklogAtEnd: backlog, LateInBacklog: lateInBacklog, Records: []DeliveryRecord{}}
	queue, completion := newDeferredHistogram(), newDeferredHistogram()
	for _, s := range stats {
		ds := s.deferred
		if ds == nil {
			continue
		}
		d.Completed += ds.completed
		d.Retried += ds.retried
		d.SkippedDistricts += ds.skipped
		d.WithSkipped += ds.withSkipped
		d.Late += ds.late
		d.RecordsDropped += ds.dropped
		for c, n := range ds.failed {
			if n > 0 {
				d.Failed[dialect.ErrClass(c).String()] += n
			}
		}
		queue.Merge(ds.queue)
		completion.Merge(ds.completion)
		for _, rec := range ds.records {
			d.Records = append(d.Records, DeliveryRecord{
				QueuedMillis:     millis(rec.queued.Sub(r.Window.Start)),
				WID:              rec.wID,
				CarrierID:        rec.carrierID,
				QueueMillis:      millis(rec.started.Sub(rec.queued)),
				CompletionMillis: millis(rec.ended.Sub(rec.queued)),
				SkippedDistricts: rec.skipped,
			})
		}
	}
	slices.SortFunc(d.Records, func(a, b DeliveryRecord) int {
		switch {
		case a.QueuedMillis < b.QueuedMillis:
			return -1
		case a.QueuedMillis > b.QueuedMillis:
			return 1
		}
		return 0
	})
	d.QueueMicros = summarise(queue)
	d.CompletionMicros = summarise(completion)
	r.Deferred = d
	r.deferredCompletion = completion
}
