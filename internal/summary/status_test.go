package summary

import (
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
)

// TestRunStatus: a timed run's status from its result and error, the rule
// every stored run was judged by (CheckStored still judges saved ones by
// it): wrong figures outrank an incomplete window, and a run with too
// many failures is one that measured its whole window without error.
func TestRunStatus(t *testing.T) {
	result := func(partial, suspect, failures bool) *driver.Result {
		r := &driver.Result{Partial: partial}
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
	}
	for _, c := range cases {
		name := "no result"
		if c.res != nil {
			name = fmt.Sprintf("partial %v, suspect %v, failures %q", c.res.Partial, c.res.IsSuspect(), c.res.TooManyFailures)
		}
		if got := RunStatus(c.res, c.failed); got != c.want {
			t.Errorf("%s, failed %v: got %s, want %s", name, c.failed, got, c.want)
		}
	}
}
