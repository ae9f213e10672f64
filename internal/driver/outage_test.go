package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestOutageLog: an outage opens with the first lost connection, counts
// writes as of unknown outcome and the rest as failed, and ends when the
// last virtual user that lost its connection has a new one; one still
// open at the end is ongoing.
func TestOutageLog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var l outageLog
	l.failed() // no outage open: not counted anywhere
	l.lost(at(1), tpcc.NewOrderTx, false)
	l.lost(at(1.5), tpcc.StockLevelTx, false)
	l.failed()
	l.regained(at(2))
	l.regained(at(4))
	l.lost(at(10), tpcc.PaymentTx, false)
	got := l.list(at(13))
	want := []Outage{
		{Start: at(1), End: at(4), Seconds: 3, VUs: 2, UnknownOutcome: 1, Failed: 2},
		{Start: at(10), Seconds: 3, Ongoing: true, VUs: 1, UnknownOutcome: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d outages %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outage %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}

	r := &Result{Window: Window{Start: at(0), End: at(12)}, Outages: got, CountsFallback: "the server restarted inside the window"}
	notes := r.FaultNotes()
	for i, want := range []string{
		"outage 1: 1.0 s into the measured window, lasted 3.0 s; 2 connection(s) lost, 1 transaction(s) of unknown outcome",
		"outage 2: 10.0 s into the measured window, still down when the run ended 3.0 s later",
		"TPM and NOPM are the driver's own counts: the server restarted inside the window",
	} {
		if i >= len(notes) || !strings.HasPrefix(notes[i], want) {
			t.Errorf("note %d: got %q, want it to begin %q", i+1, notes, want)
		}
	}
}

// TestResultNeverNegative: a counter that went backwards without a seen
// restart leaves TPM and NOPM at the driver's own counts, labelled, and
// the negative deltas for the cross-check, which marks the run suspect.
func TestResultNeverNegative(t *testing.T) {
	r := checked(-500, -300000, true, 0)
	r.TPM, r.NOPM = -300000, -500
	r.DriverTPM, r.DriverNOPM = 10000, 4400
	r.neverNegative()
	if r.TPM != r.DriverTPM || r.NOPM != r.DriverNOPM {
		t.Errorf("TPM %v, NOPM %v: want the driver's %v and %v", r.TPM, r.NOPM, r.DriverTPM, r.DriverNOPM)
	}
	if !strings.HasPrefix(r.TPMSource, DriverFallbackSource) || !strings.HasPrefix(r.NOPMSource, DriverFallbackSource) {
		t.Errorf("sources %q and %q: want them labelled as the driver's own counts", r.TPMSource, r.NOPMSource)
	}
	r.CheckCounters(0)
	if len(r.Suspect) != 2 {
		t.Errorf("suspect %q: want both counters reported as gone backwards", r.Suspect)
	}
}
