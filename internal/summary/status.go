package summary

import (
	"fmt"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
)

// Facts are what a result's status is decided from. Each measurement
// fills in what it knows: a run from its driver result, a profile or a
// scenario from its own course and its parts' statuses (Include).
type Facts struct {
	// Measured: the result holds figures (a run's driver result, a
	// finished phase, cycle or profile, a target that measured).
	Measured bool
	// Failed: it ended with an error, an interruption included.
	Failed bool
	// Incomplete: it measured less than it set out to (a window cut
	// short, a phase, step or target missing).
	Incomplete bool
	// Suspect: figures of it disagree with the driver's own counts (the
	// cross-check of driver.Result.CheckCounters).
	Suspect bool
	// TooManyFailures: more of its transactions failed than allowed
	// (driver.Result.TooManyFailures).
	TooManyFailures bool
	// ServerFailed: the server it measured failed while it did, though
	// figures were taken (driver.Result.ServerFailure: down when the
	// window ended, stalled beyond the allowed share, a managed server
	// that exited): its figures are not the server's.
	ServerFailed bool
	// Contaminated: something other than the database and oltplab used
	// more of the machine's CPU than allowed while it measured
	// (driver.Result.Contaminated: foreign CPU, steal).
	Contaminated bool
}

// ladder is the one order in which facts decide a status: the first rung
// whose facts hold gives it; none gives ok. To add a status, add its
// fact to Facts (and to Include, when a part can have it) and its rung
// here, where it ranks.
var ladder = []struct {
	status store.Status
	holds  func(Facts) bool
}{
	// Nothing measured, and it did not end well: nothing to show. Or
	// its server failed under it: what it measured is not the server's.
	{store.StatusFailed, func(f Facts) bool { return f.Failed && !f.Measured || f.ServerFailed }},
	// Wrong figures outrank an incomplete measurement: neither is
	// usable, and an incomplete one would otherwise look like a
	// measurement that merely stopped early.
	{store.StatusSuspect, func(f Facts) bool { return f.Suspect }},
	// Measured, but less than planned: shown, never counted.
	{store.StatusPartial, func(f Facts) bool { return f.Failed || f.Incomplete }},
	// Measured whole, with more failed transactions than allowed.
	{store.StatusFailures, func(f Facts) bool { return f.TooManyFailures }},
	// Measured whole and right, but the machine was not its own: what
	// others took of the CPU may have set its figures.
	{store.StatusContaminated, func(f Facts) bool { return f.Contaminated }},
}

// Status is the status a result with facts f is stored with: failed,
// suspect, partial, failures, contaminated, in this order (see ladder),
// else ok. Every kind of result takes its status from here.
func Status(f Facts) store.Status {
	for _, r := range ladder {
		if r.holds(f) {
			return r.status
		}
	}
	return store.StatusOK
}

// Include adds to f what a part (a run of a profile, a target of a
// window) stored with status s says of the whole: a failed part makes it
// incomplete, a measured one measured, with its marks.
func (f *Facts) Include(s store.Status) {
	switch s {
	case store.StatusFailed, store.StatusAbandoned, store.StatusRunning:
		f.Incomplete = true
		return
	}
	f.Measured = true
	switch s {
	case store.StatusSuspect:
		f.Suspect = true
	case store.StatusPartial:
		f.Incomplete = true
	case store.StatusFailures:
		f.TooManyFailures = true
	case store.StatusContaminated:
		f.Contaminated = true
	}
}

// RunFacts are the facts of a timed run: its driver result (nil when
// nothing was measured) and whether it ended with an error.
func RunFacts(res *driver.Result, failed bool) Facts {
	f := Facts{Failed: failed}
	if res != nil {
		f.Measured = true
		f.Incomplete = res.Partial
		f.Suspect = res.IsSuspect()
		f.TooManyFailures = res.TooManyFailures != ""
		f.ServerFailed = res.ServerFailed()
		f.Contaminated = len(res.Contaminated) > 0
	}
	return f
}

// RunStatus is the status a timed run (kind run) is stored with: Status
// of RunFacts. One rule for a run as it is measured, a merged shard, a
// synchronised window's target and CheckStored.
func RunStatus(res *driver.Result, failed bool) store.Status {
	return Status(RunFacts(res, failed))
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
