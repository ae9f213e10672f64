package scenario_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// storedOutcome reads a stored run back as the outcome it was stored with.
func storedOutcome(t *testing.T, env *scenario.Env, id int64) (store.Run, store.Outcome) {
	t.Helper()
	r, err := env.Store.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r, store.Outcome{Status: r.Status, Summary: r.Summary, Error: r.Error, EndedAt: r.EndedAt}
}

// conclusive scales a stored result's counts, and the rates over its
// window with them, to at least driver.MinCheckedTransactions, so that the
// cross-check concludes whatever the machine ran in the short window.
func conclusive(s *summary.Run) {
	var completed int64
	for _, k := range s.Kinds {
		completed += k.Completed
	}
	f := driver.MinCheckedTransactions/max(completed, 1) + 1
	for i := range s.Kinds {
		k := &s.Kinds[i]
		k.Completed, k.RolledBack, k.Retried = k.Completed*f, k.RolledBack*f, k.Retried*f
		for c := range k.Failed {
			k.Failed[c] *= f
		}
	}
	s.DBNewOrders, s.DBTransactions = s.DBNewOrders*f, s.DBTransactions*f
	s.NOPM, s.TPM, s.DriverNOPM, s.DriverTPM = s.NOPM*float64(f), s.TPM*float64(f), s.DriverNOPM*float64(f), s.DriverTPM*float64(f)
}

// TestCheckStored: what a run stores passes CheckStored; the same result
// with a figure edited, or a status its figures do not give, does not.
func TestCheckStored(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	env.NoCrossCheck = false // this test is about it
	out, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{
		Label: "check", Steps: []int{1}, VUsSpec: "1", Repeat: 1, Driver: shortDriver(),
	})
	if err != nil || len(out.Runs) != 1 {
		t.Fatalf("profile: %v, runs %v", err, out.Runs)
	}
	r, o := storedOutcome(t, env, out.Runs[0])
	if r.Status != store.StatusOK {
		t.Fatalf("the run is %s, want ok", r.Status)
	}
	if err := summary.CheckStored(r.Kind, o); err != nil {
		t.Fatalf("CheckStored refuses what the run stored: %v", err)
	}

	edit := func(f func(s *summary.Run)) store.Outcome {
		s, err := summary.DecodeRun(o.Summary)
		if err != nil {
			t.Fatal(err)
		}
		f(&s)
		e := o
		e.Summary = scenario.JSON(s)
		return e
	}
	for _, c := range []struct {
		name string
		o    store.Outcome
		want string
	}{
		{"a negative NOPM", edit(func(s *summary.Run) { s.NOPM = -s.NOPM }), "negative"},
		{"NOPM two hundred times its count", edit(func(s *summary.Run) { s.NOPM *= 200 }), "NOPM"},
		{"a negative count", edit(func(s *summary.Run) { s.Kinds[0].Completed = -1 }), "negative"},
		{"failures not flagged", edit(func(s *summary.Run) {
			s.Kinds[0].Failed = map[string]int64{"connection": 100 * s.Kinds[0].Completed}
		}), "failed"},
		{"a database count the driver's does not back, not marked suspect", edit(func(s *summary.Run) {
			conclusive(s)
			s.DBNewOrders *= 3
			s.NOPM *= 3
		}), "not marked suspect"},
		{"marked suspect without a reason", func() store.Outcome { e := o; e.Status = store.StatusSuspect; return e }(), "marked suspect"},
		{"no result, yet ok", store.Outcome{Status: store.StatusOK}, "without a result"},
	} {
		err := summary.CheckStored(store.KindRun, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// Other kinds are the store's to check.
	if err := summary.CheckStored(store.KindMonitor, store.Outcome{Status: store.StatusOK, Summary: json.RawMessage(`{}`)}); err != nil {
		t.Errorf("a monitor run: %v", err)
	}
}
