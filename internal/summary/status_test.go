package summary

import (
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
)

// TestStatus: the one ladder, rung by rung: failed (nothing measured,
// ended badly, or the server failed under it), suspect, partial,
// failures, contaminated, ok; a higher rung wins.
func TestStatus(t *testing.T) {
	cases := []struct {
		f    Facts
		want store.Status
	}{
		{Facts{Measured: true}, store.StatusOK},
		{Facts{}, store.StatusOK}, // nothing asked, nothing wrong
		{Facts{Failed: true}, store.StatusFailed},
		{Facts{Failed: true, Incomplete: true}, store.StatusFailed},
		{Facts{Measured: true, Failed: true}, store.StatusPartial},
		{Facts{Measured: true, Incomplete: true}, store.StatusPartial},
		{Facts{Measured: true, Suspect: true}, store.StatusSuspect},
		{Facts{Measured: true, Suspect: true, Failed: true}, store.StatusSuspect},
		{Facts{Measured: true, Suspect: true, Incomplete: true}, store.StatusSuspect},
		{Facts{Measured: true, Suspect: true, TooManyFailures: true}, store.StatusSuspect},
		{Facts{Measured: true, TooManyFailures: true}, store.StatusFailures},
		{Facts{Measured: true, TooManyFailures: true, Incomplete: true}, store.StatusPartial},
		{Facts{Measured: true, TooManyFailures: true, Failed: true}, store.StatusPartial},
		{Facts{Measured: true, ServerFailed: true}, store.StatusFailed},
		{Facts{Measured: true, ServerFailed: true, Suspect: true}, store.StatusFailed},
		{Facts{Measured: true, ServerFailed: true, Failed: true, Incomplete: true}, store.StatusFailed},
		{Facts{Measured: true, Contaminated: true}, store.StatusContaminated},
		{Facts{Measured: true, Contaminated: true, TooManyFailures: true}, store.StatusFailures},
		{Facts{Measured: true, Contaminated: true, Suspect: true}, store.StatusSuspect},
		{Facts{Measured: true, Contaminated: true, Incomplete: true}, store.StatusPartial},
		{Facts{Measured: true, Contaminated: true, ServerFailed: true}, store.StatusFailed},
	}
	for _, c := range cases {
		if got := Status(c.f); got != c.want {
			t.Errorf("Status(%+v) = %s, want %s", c.f, got, c.want)
		}
	}
}

// TestRunStatus: a timed run's status from its result and error, the rule
// every stored run was judged by (CheckStored still judges saved ones by
// it): wrong figures outrank an incomplete window, and a run with too
// many failures is one that measured its whole window without error.
func TestRunStatus(t *testing.T) {
	result := func(partial, suspect, failures bool, more ...func(*driver.Result)) *driver.Result {
		r := &driver.Result{Partial: partial}
		for _, f := range more {
			f(r)
		}
		if suspect {
			r.Suspect = []string{"NOPM disagrees"}
		}
		if failures {
			r.TooManyFailures = "90 of 100 transactions failed"
		}
		return r
	}
	cases := []struct {
		res    *driver.Result
		failed bool
		want   store.Status
	}{
		{nil, true, store.StatusFailed},
		{result(false, false, false), false, store.StatusOK},
		{result(false, false, false), true, store.StatusPartial},
		{result(true, false, false), false, store.StatusPartial},
		{result(true, true, false), false, store.StatusSuspect},
		{result(false, true, false), true, store.StatusSuspect},
		{result(false, false, true), false, store.StatusFailures},
		{result(true, false, true), false, store.StatusPartial},
		{result(false, false, true), true, store.StatusPartial},
		{result(false, true, true), false, store.StatusSuspect},
		{result(false, false, false, serverDown), false, store.StatusFailed},
		{result(false, true, false, serverDown), false, store.StatusFailed},
		{result(true, false, false, serverDown), true, store.StatusFailed},
		{result(false, false, false, hogged), false, store.StatusContaminated},
		{result(false, false, false, hogged), true, store.StatusPartial},
		{result(false, false, true, hogged), false, store.StatusFailures},
	}
	for _, c := range cases {
		name := "no result"
		if c.res != nil {
			name = fmt.Sprintf("partial %v, suspect %v, failures %q, server failure %q, contaminated %q",
				c.res.Partial, c.res.IsSuspect(), c.res.TooManyFailures, c.res.ServerFailure, c.res.Contaminated)
		}
		if got := RunStatus(c.res, c.failed); got != c.want {
			t.Errorf("%s, failed %v: got %s, want %s", name, c.failed, got, c.want)
		}
	}
}

// TestInclude: a whole (a profile, a window) takes the facts of its
// parts' statuses: any suspect part makes it suspect, a failed or partial
// one incomplete, one with too many failures so marked.
func TestInclude(t *testing.T) {
	cases := []struct {
		parts []store.Status
		want  store.Status
	}{
		{[]store.Status{store.StatusOK, store.StatusOK}, store.StatusOK},
		{[]store.Status{store.StatusOK, store.StatusFailures}, store.StatusFailures},
		{[]store.Status{store.StatusOK, store.StatusPartial}, store.StatusPartial},
		{[]store.Status{store.StatusOK, store.StatusFailed}, store.StatusPartial},
		{[]store.Status{store.StatusPartial, store.StatusSuspect}, store.StatusSuspect},
		{[]store.Status{store.StatusFailures, store.StatusPartial}, store.StatusPartial},
		{[]store.Status{store.StatusAbandoned}, store.StatusPartial}, // failed only when the whole says it failed
	}
	for _, c := range cases {
		var f Facts
		for _, s := range c.parts {
			f.Include(s)
		}
		if got := Status(f); got != c.want {
			t.Errorf("parts %v: got %s, want %s", c.parts, got, c.want)
		}
	}
	f := Facts{Failed: true}
	f.Include(store.StatusFailed)
	if got := Status(f); got != store.StatusFailed {
		t.Errorf("only failed parts, and the whole failed: got %s, want failed", got)
	}
}

func serverDown(r *driver.Result) { r.FailServer("the server was down when the measured window ended") }
func hogged(r *driver.Result)     { r.Contaminated = []string{"foreign CPU 48% of the host's 2 cores"} }
