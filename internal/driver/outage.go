package driver

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// ErrServerGone is a lost connection that did not come back within
// Options.ReconnectFor: the server is gone for good, as far as this run
// can tell.
var ErrServerGone = errors.New("server gone")

// Outage is a stretch of a run during which virtual users had lost their
// connection: from the first virtual user that lost it to the moment the
// last of them had a new session. A server restart, a failover or a
// network cut each show as one.
type Outage struct {
	Start time.Time `json:"start"`
	// End is zero when the run ended before every virtual user was back
	// (Ongoing).
	End     time.Time `json:"end,omitzero"`
	Seconds float64   `json:"seconds"`
	Ongoing bool      `json:"ongoing,omitempty"`
	// VUs counts the connections lost in it (a virtual user that lost its
	// new session again counts again).
	VUs int `json:"vus"`
	// Silent counts the connections among them that were taken for dead
	// because the server did not answer a call within
	// Options.AnswerTimeout (nothing closed them).
	Silent int `json:"silent,omitempty"`
	// UnknownOutcome counts the writing transactions (New-Order, Payment,
	// Delivery) whose connection broke under them: the server may have
	// committed them before it went. Failed counts the other transactions
	// that failed in it: read-only ones whose connection broke, and any
	// that failed for another reason while it lasted.
	UnknownOutcome int64 `json:"unknown_outcome"`
	Failed         int64 `json:"failed"`
}

// outageLog records the outages of one run. Virtual users touch it only
// when a transaction failed or a connection was lost or regained, never on
// the path of a transaction that succeeds.
type outageLog struct {
	mu   sync.Mutex
	cur  *Outage
	down int // virtual users without a session in cur
	done []Outage
}

// lost records that a virtual user's connection broke under a transaction
// of kind at now (silent: it was taken for dead after the answer
// timeout); it opens an outage when none is open.
func (l *outageLog) lost(now time.Time, kind tpcc.TxKind, silent bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		l.cur = &Outage{Start: now}
	}
	l.cur.VUs++
	if silent {
		l.cur.Silent++
	}
	l.down++
	if writes(kind) {
		l.cur.UnknownOutcome++
	} else {
		l.cur.Failed++
	}
}

// regained records that a virtual user that lost its connection has a new
// session; the outage ends when none is left without one.
func (l *outageLog) regained(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return
	}
	if l.down--; l.down > 0 {
		return
	}
	l.cur.End = now
	l.cur.Seconds = now.Sub(l.cur.Start).Seconds()
	l.done = append(l.done, *l.cur)
	l.cur = nil
}

// failed counts a transaction that failed for another reason than a lost
// connection, when an outage is open.
func (l *outageLog) failed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		l.cur.Failed++
	}
}

// list returns every outage; one still open at now is returned as
// ongoing.
func (l *outageLog) list(now time.Time) []Outage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]Outage(nil), l.done...)
	if l.cur != nil {
		o := *l.cur
		o.Ongoing = true
		o.Seconds = now.Sub(o.Start).Seconds()
		out = append(out, o)
	}
	return out
}

// writes reports whether a transaction kind changes the database: its
// outcome is unknown when its connection breaks (TPC-C 2.5, 2.4 and 2.7
// write; Order-Status, 2.6, and Stock-Level, 2.8, only read).
func writes(k tpcc.TxKind) bool {
	return k == tpcc.NewOrderTx || k == tpcc.PaymentTx || k == tpcc.DeliveryTx
}

// FaultNotes describes, one line each, the run's outages (when each began
// relative to the measured window, how long it lasted, what it cost), its
// stalls and
// why its TPM and NOPM are the driver's own counts, if they are.
func (r *Result) FaultNotes() []string {
	var notes []string
	for i, o := range r.Outages {
		notes = append(notes, fmt.Sprintf("outage %d: %s", i+1, r.describeOutage(o)))
	}
	for i, s := range r.Stalls {
		notes = append(notes, fmt.Sprintf("stall %d: %s", i+1, r.describeStall(s)))
	}
	if r.CountsFallback != "" {
		notes = append(notes, "TPM and NOPM are the driver's own counts: "+r.CountsFallback)
	}
	return notes
}

func (r *Result) describeOutage(o Outage) string {
	when := "before the measured window"
	if ws := r.Window.Start; !ws.IsZero() && !o.Start.Before(ws) {
		when = fmt.Sprintf("%.1f s into the measured window", o.Start.Sub(ws).Seconds())
		if we := r.Window.End; !we.IsZero() && o.Start.After(we) {
			when = "after the measured window"
		}
	}
	lasted := fmt.Sprintf("lasted %.1f s", o.Seconds)
	if o.Ongoing {
		lasted = fmt.Sprintf("still down when the run ended %.1f s later", o.Seconds)
	}
	lost := fmt.Sprintf("%d connection(s) lost", o.VUs)
	if o.Silent > 0 {
		lost += fmt.Sprintf(" (%d of them silent: no answer within the answer timeout)", o.Silent)
	}
	return fmt.Sprintf("%s, %s; %s, %d transaction(s) of unknown outcome (writes the server may have committed), %d failed",
		when, lasted, lost, o.UnknownOutcome, o.Failed)
}
