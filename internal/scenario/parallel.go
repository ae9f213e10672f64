package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// ParallelTarget is one database of a scenario that drives several at
// once.
type ParallelTarget struct {
	// Name is the target's name (a plan's); its runs are labelled with it.
	Name   string
	DB     dialect.Database
	Target dialect.Target
	// Instance describes the managed instance serving Target (nil for a
	// database oltplab did not start), for the context of its runs.
	Instance any
	// OwnIO reads the managed instance's own I/O (nil when none).
	OwnIO sampler.IOProbe
}

// WindowOptions describe one measured window synchronised over several
// targets.
type WindowOptions struct {
	// Label labels the window's run; each target's run is Label/NAME.
	Label string
	// Phase names what the window is part of ("baseline", "noisy"); empty
	// for plain parallel targets. Repeat numbers the window, from 1.
	Phase  string
	Repeat int
	// Driver is every target's run: the same virtual users, ramp-up,
	// duration and grace on each. Target i runs with Seed+i.
	Driver driver.Options
	// SkewTolerance is how far apart the targets' windows may start or
	// end before the window is marked (SkewExceeded); 0 checks nothing.
	SkewTolerance time.Duration
	// Beside, when set, runs as soon as the targets are released, given
	// the planned measured window, while they run; the window waits for
	// it, and its error fails the window (what was measured is kept).
	Beside func(ctx context.Context, start, end time.Time) error
}

// ErrNoTargets: a scenario over several targets was given none.
var ErrNoTargets = errors.New("no targets")

// Window drives every target at once with one synchronised measured
// window: each opens its sessions, they all start together (a
// driver.Barrier), and every target's window is the same wall-clock
// interval up to the time each takes to read its counters. Each target's
// run is stored as a run of its own (kind run, labelled Label/NAME, with
// its host samples); the window, with each target's actual start and end,
// the skew between them and the totals, as a run of kind parallel. The
// returned error is the first failure (a target that could not start
// stops the others before they measure); what was measured is stored.
func (e *Env) Window(ctx context.Context, targets []ParallelTarget, o WindowOptions) (summary.ParallelWindow, error) {
	w := summary.ParallelWindow{Phase: o.Phase, Repeat: o.Repeat, SkewToleranceMillis: millis(o.SkewTolerance)}
	if len(targets) == 0 {
		return w, ErrNoTargets
	}
	type prepared struct {
		env    *Env
		target ParallelTarget
		rc     RunContext
	}
	preps := make([]prepared, len(targets))
	names := make([]string, len(targets))
	var obs sync.Mutex // the targets' runs tell the one observer, one at a time
	for i, t := range targets {
		names[i] = t.Name
		te := e.ForTarget(t.Name, t.Instance, t.OwnIO)
		if note := te.Observer.Note; note != nil {
			te.Observer.Note = func(msg string) { obs.Lock(); defer obs.Unlock(); note(msg) }
		}
		if live := e.Observer.Live; live != nil {
			te.Observer.Live = func(l driver.Live) { obs.Lock(); defer obs.Unlock(); l.Target = t.Name; live(l) }
		}
		for _, f := range []*func(RunStored){&te.Observer.RunMeasured, &te.Observer.RunStored} {
			if tell := *f; tell != nil {
				*f = func(r RunStored) { obs.Lock(); defer obs.Unlock(); r.Target = t.Name; tell(r) }
			}
		}
		preps[i] = prepared{env: te, target: t}
	}
	schemas := make([]schemaOf, len(targets))
	for i, t := range targets {
		m, err := ReadSchema(ctx, t.DB, t.Target)
		if err != nil {
			return w, fmt.Errorf("target %s: %w", t.Name, err)
		}
		schemas[i] = schemaOf{meta: m}
		preps[i].rc = preps[i].env.GatherContext(ctx, t.DB, t.Target, &m)
		if t.DB.Caps().Procedures && m.Procedures {
			schemas[i].style = o.Driver.Style
		} else {
			schemas[i].style = dialect.StyleClientSQL // the dialect (SQLite) or this build has none
		}
	}

	d := o.Driver
	// Every target's sessions at once, in this process: each server must
	// take its own, and this host's memory all of them.
	var mem int64
	for i, t := range targets {
		need, what, err := stepNeeds(d, d.Users(), schemas[i].meta.Warehouses)
		if err != nil {
			return w, fmt.Errorf("target %s: %w", t.Name, err)
		}
		if err := e.checkConnections(ctx, t.DB, need, what); err != nil {
			return w, fmt.Errorf("target %s: %w", t.Name, err)
		}
		mem += need.Bytes
	}
	if err := e.checkMemory(mem, fmt.Sprintf("the runs of the %d targets", len(targets))); err != nil {
		return w, err
	}
	params := map[string]any{"driver": d, "targets": names, "phase": o.Phase, "repeat": o.Repeat,
		"skew_tolerance_seconds": o.SkewTolerance.Seconds(), "mode": d.Mode.String(), "mode_label": d.ModeLabel()}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindParallel, Label: o.Label, Repeat: o.Repeat, VUs: d.VUs,
		ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq,
		Params: JSON(params), Context: JSON(e.GatherContext(ctx, nil, dialect.Target{}, nil))})
	if err != nil {
		return w, storeErr("record the synchronised window", err)
	}
	w.RunID = id

	barrier := driver.NewBarrier(len(targets))
	d.Start = barrier
	type outcome struct {
		id  int64
		res *driver.Result
		err error
	}
	outs := make([]outcome, len(targets))
	var wg sync.WaitGroup
	for i, p := range preps {
		wg.Go(func() {
			rd := d
			rd.Seed = d.Seed + uint64(i)
			rd.Style = schemas[i].style
			id, res, err := p.env.timedRun(ctx, p.target.DB, p.target.Target, schemas[i].meta, rd, p.rc, 0,
				profile.Slot{Repeat: max(o.Repeat, 1) - 1}, o.Label+"/"+p.target.Name, Preparation{})
			// A run that failed before its driver started (its row could not
			// be stored) never reached the start: the others must not wait.
			barrier.Abort()
			outs[i] = outcome{id, res, err}
		})
	}
	var besideErr error
	if o.Beside != nil {
		wg.Go(func() {
			released, err := barrier.Wait(ctx)
			if err != nil {
				return // the targets did not start: their errors say why
			}
			start := released.Add(d.Rampup)
			besideErr = o.Beside(ctx, start, start.Add(d.Duration))
		})
	}
	wg.Wait()

	w.Released = barrier.Released()
	if !w.Released.IsZero() {
		w.PlannedStart = w.Released.Add(d.Rampup)
		w.PlannedEnd = w.PlannedStart.Add(d.Duration)
	}
	var errs []error
	for i, out := range outs {
		if out.err != nil && !errors.Is(out.err, driver.ErrBarrierBroken) {
			errs = append(errs, fmt.Errorf("target %s: %w", names[i], out.err))
		}
		w.Targets = append(w.Targets, e.windowTarget(w, names[i], out.id, out.res, out.err))
	}
	if besideErr != nil {
		errs = append(errs, besideErr)
	}
	if len(errs) == 0 {
		for _, out := range outs {
			if out.err != nil { // every failure was a broken barrier: say so once
				errs = append(errs, out.err)
				break
			}
		}
	}
	settleWindow(&w)

	measured := slices.ContainsFunc(w.Targets, func(t summary.WindowTarget) bool { return t.Result != nil })
	status := summary.Status(summary.Facts{Measured: measured, Failed: !measured || len(errs) > 0,
		Incomplete: !w.Complete, Suspect: w.Suspect})
	runErr := errors.Join(errs...)
	errText := ""
	if runErr != nil {
		errText = e.scrub(runErr.Error())
	}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(w), Error: errText}); err != nil {
		return w, errors.Join(runErr, err)
	}
	return w, runErr
}

// windowTarget is one target's run in window w: its run id, the result
// and error timedRun returned, and the status its run was stored with.
func (e *Env) windowTarget(w summary.ParallelWindow, name string, id int64, res *driver.Result, err error) summary.WindowTarget {
	t := summary.WindowTarget{Name: name, RunID: id, Status: summary.RunStatus(res, err != nil), Result: res}
	if err != nil {
		t.Error = e.scrub(err.Error())
	}
	if res != nil {
		t.Suspect = res.Suspect
		t.Start, t.End = res.Window.Start, res.Window.End
		t.NOPM, t.TPM, t.TPMSource = res.NOPM, res.TPM, res.TPMSource
		if !w.PlannedStart.IsZero() && !t.Start.IsZero() {
			t.StartOffsetMillis = millis(t.Start.Sub(w.PlannedStart))
			t.EndOffsetMillis = millis(t.End.Sub(w.PlannedEnd))
		}
	}
	return t
}

// schemaOf is what a target's runs need of its schema.
type schemaOf struct {
	meta  tpcc.Meta
	style dialect.Style
}

// settleWindow computes the skew between the targets' windows, the totals and
// the spread from the targets' figures.
func settleWindow(w *summary.ParallelWindow) {
	var starts, ends []time.Time
	var nopm, tpm []float64
	w.Complete = len(w.Targets) > 0
	for _, t := range w.Targets {
		whole := t.Whole()
		if !whole {
			w.Complete = false
		}
		if t.Status == store.StatusSuspect {
			w.Suspect = true
		}
		if !t.Start.IsZero() && !t.End.IsZero() {
			starts, ends = append(starts, t.Start), append(ends, t.End)
		}
		if whole {
			nopm, tpm = append(nopm, t.NOPM), append(tpm, t.TPM)
			w.TotalNOPM += t.NOPM
			w.TotalTPM += t.TPM
		}
	}
	w.StartSkewMillis, w.EndSkewMillis = spreadMillis(starts), spreadMillis(ends)
	w.MaxSkewMillis = math.Max(w.StartSkewMillis, w.EndSkewMillis)
	w.SkewExceeded = w.SkewToleranceMillis > 0 && w.MaxSkewMillis > w.SkewToleranceMillis
	w.NOPM, w.TPM = profile.Summarize(nopm), profile.Summarize(tpm)
}

// spreadMillis is the latest minus the earliest of ts, in milliseconds.
func spreadMillis(ts []time.Time) float64 {
	if len(ts) < 2 {
		return 0
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts[1:] {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return millis(hi.Sub(lo))
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ParallelOptions are the parallel-targets scenario: Repeat synchronised
// windows over the same targets, one after the other.
type ParallelOptions struct {
	// Label labels the windows' runs; each target's are Label/NAME.
	Label string
	// Driver is every target's run; window r (from 1) of K targets seeds
	// target i with Seed + (r-1)*K + i.
	Driver        driver.Options
	Repeat        int
	SkewTolerance time.Duration
	// Done is how many windows an earlier attempt measured completely:
	// the scenario continues after them (a resumed experiment).
	Done int
	// Stored, when set, is called with each window once it is stored; an
	// error stops the scenario.
	Stored func(ctx context.Context, w summary.ParallelWindow) error
}

// Parallel measures windows Done+1..Repeat of o over targets (Window);
// it stops at the first window that fails or is interrupted, and returns
// the windows it stored.
func (e *Env) Parallel(ctx context.Context, targets []ParallelTarget, o ParallelOptions) ([]summary.ParallelWindow, error) {
	if o.Repeat < 1 {
		return nil, fmt.Errorf("repeat must be at least 1, got %d", o.Repeat)
	}
	var out []summary.ParallelWindow
	var suspect SuspectError
	for r := o.Done + 1; r <= o.Repeat; r++ {
		e.note("synchronised window %d/%d over %d target(s), %d virtual user(s) each", r, o.Repeat, len(targets), o.Driver.VUs)
		d := o.Driver
		d.Seed += uint64((r - 1) * len(targets))
		w, err := e.Window(ctx, targets, WindowOptions{Label: o.Label, Repeat: r, Driver: d, SkewTolerance: o.SkewTolerance})
		if w.RunID != 0 {
			out = append(out, w)
			e.note("window %d: total NOPM %.0f, TPM %.0f; windows %.0f ms apart at most%s%s", r, w.TotalNOPM, w.TotalTPM,
				w.MaxSkewMillis, skewNote(w), suspectNote(w))
			suspect.add(w, o.Driver.VUs)
			if o.Stored != nil {
				if serr := o.Stored(ctx, w); serr != nil {
					return out, errors.Join(err, serr)
				}
			}
		}
		if err != nil {
			return out, err
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, suspect.orNil()
}

// add records the suspect targets of w, and counts its targets' runs.
func (e *SuspectError) add(w summary.ParallelWindow, vus int) {
	for _, t := range w.Targets {
		if t.RunID == 0 {
			continue
		}
		e.Total++
		if t.Status == store.StatusSuspect {
			e.Runs = append(e.Runs, SuspectRun{RunID: t.RunID, VUs: vus, Reasons: t.Suspect})
		}
	}
}

// orNil is e when it holds a suspect run, else nil.
func (e *SuspectError) orNil() error {
	if len(e.Runs) == 0 {
		return nil
	}
	return e
}

func suspectNote(w summary.ParallelWindow) string {
	if !w.Suspect {
		return ""
	}
	var names []string
	for _, t := range w.Targets {
		if t.Status == store.StatusSuspect {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("; SUSPECT: %s's database figures disagree with the driver's own counts", strings.Join(names, ", "))
}

func skewNote(w summary.ParallelWindow) string {
	if !w.SkewExceeded {
		return ""
	}
	return fmt.Sprintf(" (above the tolerance of %.0f ms: marked)", w.SkewToleranceMillis)
}
