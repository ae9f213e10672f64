package summary

import (
	"fmt"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
)

// RunStatus is the status a run of kind run is stored with, from its
// result (nil when nothing was measured) and whether it ended with an
// error: wrong figures outrank an incomplete window (neither is usable,
// and this one would otherwise look like a measurement), and a run with
// too many failures is one that measured its whole window. One rule for
// timedRun, merged shards and CheckStored.
func RunStatus(res *driver.Result, failed bool) store.Status {
	switch {
	case failed && res == nil:
		return store.StatusFailed
	case res != nil && res.IsSuspect():
		return store.StatusSuspect
	case !failed && res != nil && !res.Partial && res.TooManyFailures != "":
		return store.StatusFailures
	case failed || (res != nil && res.Partial):
		return store.StatusPartial
	}
	return store.StatusOK
}

// CheckStored judges a result that comes back from outside the store (a
// saved file `oltplab results import` loads) by the rules it was measured
// under: a run's result must be one driver.Result.Recheck accepts, with
// the status RunStatus gives it. Results of other kinds are checked for
// their format only (by the store).
func CheckStored(kind store.Kind, o store.Outcome) error {
	if kind != store.KindRun {
		return nil
	}
	if len(o.Summary) == 0 {
		if o.Status != store.StatusFailed || o.Error == "" {
			return fmt.Errorf("a run without a result must have failed with an error, not be %s", o.Status)
		}
		return nil
	}
	s, err := DecodeRun(o.Summary)
	if err != nil {
		return fmt.Errorf("its result: %w", err)
	}
	if err := s.Result.Recheck(); err != nil {
		return err
	}
	if want := RunStatus(s.Result, o.Error != ""); o.Status != want {
		return fmt.Errorf("it is marked %s, but its figures make it %s", o.Status, want)
	}
	return nil
}
