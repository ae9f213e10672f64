package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// A profile step with interleave: targets runs over all targets at once
// and alternates its runs between them: round r measures every step (the
// sweep ascending in even rounds, descending in odd ones), and at each
// step every target once, the baseline first in even rounds and last in
// odd ones (A B, B A, A B, ...: a linear drift of the host weighs on both
// sides of the pairs alike over two rounds). Each target's runs are a
// profile of its own, as a per-target profile step stores them; a run of
// the baseline and a run of another target at the same step and round
// are a pair, measured one right after the other, with the same seed
// (the same terminal inputs). The report analyses them pair by pair
// (profile.Paired) beside the unpaired ratio. With aa_check the baseline
// is measured once more at every step after all rounds: the A/A check.

// pairedProgress is what a paired profile step saves as soon as a
// profile exists: a resumed attempt continues every profile with the
// same seed.
type pairedProgress struct {
	Seed     uint64           `json:"seed"`
	Profiles map[string]int64 `json:"profiles"`
	// AA is the profile of the A/A check, once it started.
	AA int64 `json:"aa,omitempty"`
}

// pairedOrder is the targets with the baseline first, then in plan
// order.
func pairedOrder(rs []*Running, baseline string) []*Running {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b *Running) int {
		switch {
		case a.Spec.Name == baseline && b.Spec.Name != baseline:
			return -1
		case b.Spec.Name == baseline && a.Spec.Name != baseline:
			return 1
		}
		return 0
	})
	return out
}

// aaLabel is the label of the A/A check's profile.
func aaLabel(experiment, baseline string) string { return experiment + "/" + baseline + "/aa" }

func (s *profileStep) runPaired(ctx context.Context, x *Exec) (Outcome, error) {
	var prog pairedProgress
	if len(x.Progress) > 0 {
		if err := json.Unmarshal(x.Progress, &prog); err != nil {
			return Outcome{}, fmt.Errorf("read the progress of the interrupted profile: %w", err)
		}
	}
	if prog.Profiles == nil {
		prog.Profiles = map[string]int64{}
	}
	d := s.Load.Driver()
	switch {
	case prog.Seed != 0:
		d.Seed = prog.Seed // the continued profiles keep their seed
	case d.Seed == 0:
		d.Seed = drawSeed()
	}
	prog.Seed = d.Seed

	// What measureAgain does for one target's profile, done for the pairs:
	// a pass that ends because a managed target's server failed restarts
	// it and measures again (retries); one that ends with contaminated
	// runs measures their pairs again (remeasure). Each pass continues
	// the same profiles: a pair either of whose runs does not count is
	// superseded whole and measured again, side by side.
	retries, remeasure := s.againLimits(slices.ContainsFunc(x.Targets, func(t *Running) bool { return t.Managed != nil }))
	note := notef(x)
	var done []string
	var ids []int64
	retried, remeasured := 0, 0
	again, redo := "", false
	for {
		oc, failedOn, err := s.pairedPass(ctx, x, d, &prog, again, redo)
		ids = append(ids, oc.RunIDs...)
		oc.RunIDs = ids
		var failed *scenario.ServerFailedError
		switch {
		case ctx.Err() != nil:
		case errors.As(err, &failed) && failedOn != nil && failedOn.Server != nil && retried < retries:
			retried++
			name := failedOn.Spec.Name
			note("run %d failed: %s; restarting %s and measuring its pair again (retry %d of %d)",
				failed.Run.RunID, strings.Join(failed.Run.Reasons, "; "), name, retried, retries)
			if _, rerr := failedOn.Server.Restart(ctx, false); rerr != nil {
				return oc, errors.Join(err, fmt.Errorf("restart %s after its server failed: %w", name, rerr))
			}
			if rerr := failedOn.Reopen(ctx); rerr != nil {
				return oc, errors.Join(err, rerr)
			}
			done = append(done, fmt.Sprintf("run %d failed (%s's server: %s) and its pair was measured again after a restart", failed.Run.RunID, name, failed.Run.Reasons[0]))
			again = fmt.Sprintf("%s's server failed; it was restarted and the pair measured again (retry %d of %d)", name, retried, retries)
			redo = false
			continue
		case OnlyContaminated(err) && remeasured < remeasure:
			var dirty *scenario.ContaminatedError
			errors.As(err, &dirty)
			remeasured++
			note("%d run(s) contaminated (%s); measuring their pairs again (pass %d of %d)",
				len(dirty.Runs), dirty.Runs[0].Reasons[0], remeasured, remeasure)
			done = append(done, fmt.Sprintf("%d contaminated run(s) measured again with their pairs (pass %d of %d)", len(dirty.Runs), remeasured, remeasure))
			again = fmt.Sprintf("contaminated; the pair was measured again (pass %d of %d)", remeasured, remeasure)
			redo = true
			continue
		}
		if len(done) > 0 {
			oc.Headline = strings.TrimPrefix(oc.Headline+"; "+strings.Join(done, "; "), "; ")
		}
		return oc, err
	}
}

// pairedPass measures every pair the profiles of prog do not hold yet
// (all of them the first time), continuing them with again and redo as
// scenario.ProfileOptions' Remeasure and RedoContaminated. It returns
// the target whose server failed when that ended the pass.
func (s *profileStep) pairedPass(ctx context.Context, x *Exec, d driver.Options, prog *pairedProgress, again string, redo bool) (Outcome, *Running, error) {
	targets := pairedOrder(x.Targets, s.baseline)
	names := make([]string, len(targets))
	runs := make([]*scenario.ProfileRun, 0, len(targets))
	oc := Outcome{Profiles: map[string]int64{}}
	var failedOn *Running // the target whose server failed
	// finish ends every opened profile after runErr.
	finish := func(runErr error, stops *profile.Stopping) (Outcome, *Running, error) {
		errs := []error{runErr}
		for _, p := range runs {
			if stops != nil {
				if err := p.SaveStopping(context.WithoutCancel(ctx), *stops); err != nil {
					errs = append(errs, err)
				}
			}
			out, err := p.Finish(ctx, runErr)
			oc.RunIDs = append(oc.RunIDs, out.Runs...)
			if err != nil && !errors.Is(err, runErr) {
				errs = append(errs, err)
			}
		}
		return oc, failedOn, errors.Join(errs...)
	}
	for i, t := range targets {
		name := t.Spec.Name
		names[i] = name
		env := x.Env.ForTarget(name, t.Instance, t.OwnIO)
		p, err := env.OpenProfile(ctx, t.DB, t.Target, scenario.ProfileOptions{
			Label: s.experiment + "/" + name, Steps: s.VUs.Steps, VUsSpec: s.VUs.Spec, Repeat: s.runs(), Interleave: true,
			Checkpoint: s.CheckpointBefore, Reset: s.ResetBetween, Driver: d, Continue: prog.Profiles[name],
			Remeasure: again, RedoContaminated: redo,
			Started: func(ctx context.Context, id int64) error {
				prog.Profiles[name] = id
				return x.Save(ctx, prog)
			}})
		if p != nil {
			runs = append(runs, p)
			oc.Profiles[name] = p.ID
		}
		if err != nil {
			if p != nil {
				runs = runs[:len(runs)-1]
				_, _ = p.Finish(ctx, err)
			}
			return finish(fmt.Errorf("target %s: %w", name, err), nil)
		}
	}
	// A pair an interruption left half measured is measured again whole:
	// its runs must be next to each other in time.
	kept := map[profile.Slot]int{}
	for _, p := range runs {
		for slot := range p.Kept {
			kept[slot]++
		}
	}
	why := "the other run of its pair was not measured before the experiment was interrupted; the pair was measured again"
	if again != "" {
		why = "the other run of its pair did not count (" + again + ")"
	}
	for slot, n := range kept {
		if n == len(runs) {
			continue
		}
		for _, p := range runs {
			if err := p.Supersede(ctx, slot, why); err != nil {
				return finish(err, nil)
			}
		}
	}

	pr := newPairing(names, len(s.VUs.Steps))
	for slot := range runs[0].Kept {
		for i, p := range runs {
			k := p.Kept[slot]
			pr.record(i, slot, k.NOPM, k.Counts)
		}
	}
	var adaptive *profile.Adaptive
	var stopping *profile.Stopping
	of := "paired NOPM ratio to " + names[0]
	if s.Repeat.Auto {
		users := make([]int, len(s.VUs.Steps))
		for i := range users {
			users[i] = runs[0].Users(i)
		}
		adaptive = profile.NewAdaptive(users, s.Adaptive.Rule(), true)
		for slot := range runs[0].Kept {
			adaptive.Keep(slot, pr.counted(slot))
		}
		for step := range s.VUs.Steps {
			adaptive.Check(step, pr.halfWidth(step), of)
		}
		stopping = &profile.Stopping{Rule: s.Adaptive.Rule(), Baseline: names[0]}
	}
	fixed := profile.Order(len(s.VUs.Steps), s.runs(), true)
	next := 0
	for {
		var i int
		var slot profile.Slot
		if adaptive != nil {
			var ok bool
			if i, slot, ok = adaptive.Next(); !ok {
				break
			}
		} else {
			for next < len(fixed) && kept[fixed[next]] == len(runs) {
				next++
			}
			if next == len(fixed) {
				break
			}
			i, slot = next, fixed[next]
			next++
		}
		order := make([]int, len(runs))
		for k := range order {
			order[k] = k
		}
		if slot.Repeat%2 == 1 {
			slices.Reverse(order)
		}
		for _, k := range order {
			sr, err := runs[k].Measure(ctx, i, slot)
			if sr.Result != nil {
				pr.record(k, slot, sr.Result.NOPM, sr.Counts)
			}
			if failed := (*scenario.ServerFailedError)(nil); errors.As(err, &failed) {
				failedOn = targets[k]
			}
			if err != nil || ctx.Err() != nil {
				if stopping != nil {
					stopping.Stops = adaptive.Stops()
				}
				return finish(err, stopping)
			}
		}
		if adaptive != nil {
			if stop, ok := adaptive.Record(slot, pr.counted(slot), pr.halfWidth(slot.Step), of); ok {
				x.Env.Observer.Note(fmt.Sprintf("step %d (%d users): %s", slot.Step+1, stop.Users, stop.Text(s.Adaptive.Rule().Precision)))
			}
		}
	}
	if stopping != nil {
		stopping.Stops = adaptive.Stops()
	}
	if s.AACheck {
		if err := s.measureAA(ctx, x, targets[0], d, prog, &oc); err != nil {
			return finish(err, stopping)
		}
	}
	oc, _, err := finish(nil, stopping)
	if ps, rerr := loadPaired(ctx, x.Env.Store, oc.Profiles, prog.AA, names, report.Include{}); rerr == nil {
		oc.Headline = ps.headline()
	}
	if h := stopsHeadline(pointerStops(stopping)); h != "" {
		oc.Headline = strings.TrimPrefix(oc.Headline+"; "+h, "; ")
	}
	return oc, nil, err
}

func pointerStops(st *profile.Stopping) []profile.Stop {
	if st == nil {
		return nil
	}
	return st.Stops
}

// measureAA measures the baseline once more at every step, as a profile
// of its own (it must not count among the baseline's runs): the A/A
// check. Each run has the seed of the baseline's first run of the step.
func (s *profileStep) measureAA(ctx context.Context, x *Exec, base *Running, d driver.Options, prog *pairedProgress, oc *Outcome) error {
	name := base.Spec.Name
	env := x.Env.ForTarget(name, base.Instance, base.OwnIO)
	env.Observer.Note = prefixed(x.Env.Observer.Note, "A/A check: ")
	p, err := env.OpenProfile(ctx, base.DB, base.Target, scenario.ProfileOptions{
		Label: aaLabel(s.experiment, name), Steps: s.VUs.Steps, VUsSpec: s.VUs.Spec, Repeat: 1,
		Checkpoint: s.CheckpointBefore, Reset: s.ResetBetween, Driver: d, Continue: prog.AA,
		Started: func(ctx context.Context, id int64) error {
			prog.AA = id
			return x.Save(ctx, prog)
		}})
	if err != nil {
		if p != nil {
			_, _ = p.Finish(ctx, err)
		}
		return fmt.Errorf("A/A check on %s: %w", name, err)
	}
	var runErr error
	for i, slot := range profile.Order(len(s.VUs.Steps), 1, false) {
		if _, done := p.Kept[slot]; done {
			continue
		}
		if _, err := p.Measure(ctx, i, slot); err != nil || ctx.Err() != nil {
			runErr = err
			break
		}
	}
	out, err := p.Finish(ctx, runErr)
	oc.RunIDs = append(oc.RunIDs, out.Runs...)
	oc.Profiles[name+"/aa"] = p.ID
	return err
}

// prefixed puts prefix before every note; nil stays nil.
func prefixed(note func(string), prefix string) func(string) {
	if note == nil {
		return nil
	}
	return func(msg string) { note(prefix + msg) }
}

// pairing keeps the NOPM of the runs of a paired step as they are
// measured, to decide when to stop: per target (0 the baseline), per
// step, per round, the figures of the runs that count.
type pairing struct {
	names []string
	nopm  [][]map[int]float64 // target, step, round
	runs  map[profile.Slot]int
	count map[profile.Slot]int
}

func newPairing(names []string, steps int) *pairing {
	p := &pairing{names: names, nopm: make([][]map[int]float64, len(names)), runs: map[profile.Slot]int{}, count: map[profile.Slot]int{}}
	for i := range p.nopm {
		p.nopm[i] = make([]map[int]float64, steps)
		for s := range p.nopm[i] {
			p.nopm[i][s] = map[int]float64{}
		}
	}
	return p
}

func (p *pairing) record(target int, slot profile.Slot, nopm float64, counts bool) {
	p.runs[slot]++
	if counts {
		p.nopm[target][slot.Step][slot.Repeat] = nopm
		p.count[slot]++
	}
}

// counted reports whether every target's run of slot counts: a pair
// (or a round of pairs) the rule may take.
func (p *pairing) counted(slot profile.Slot) bool { return p.count[slot] == len(p.names) }

// halfWidth is the widest relative half-width of the paired ratios of
// every target to the baseline at step.
func (p *pairing) halfWidth(step int) float64 {
	var hw float64
	for t := 1; t < len(p.names); t++ {
		num, den := pairsOf(p.nopm[t][step], p.nopm[0][step])
		hw = max(hw, profile.Paired(num, den).HalfWidth())
	}
	return hw
}

// pairsOf lines up two targets' figures by round: the rounds both
// measured.
func pairsOf(num, den map[int]float64) (nums, dens []float64) {
	var rounds []int
	for r := range num {
		if _, ok := den[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	for _, r := range rounds {
		nums, dens = append(nums, num[r]), append(dens, den[r])
	}
	return nums, dens
}

// pairedStep is one step of a paired comparison, read back from the
// store: every target's figures by round, and the A/A check's run.
type pairedSet struct {
	names    []string
	profiles []report.Profile // in names' order
	// nopm: per target, per users, per round: the runs that count.
	nopm []map[int]map[int]float64
	// aa: the A/A check's NOPM per users (counting runs only).
	aa map[int]float64
}

// loadPaired reads a paired step's profiles (ids by target name, and the
// A/A check's) in names' order, the baseline first.
func loadPaired(ctx context.Context, st *store.Store, ids map[string]int64, aa int64, names []string, inc report.Include) (*pairedSet, error) {
	ps := &pairedSet{names: names, aa: map[int]float64{}}
	for _, n := range names {
		rp, byUsers, err := loadRounds(ctx, st, ids[n], inc)
		if err != nil {
			return nil, err
		}
		rp.Label = n
		ps.profiles = append(ps.profiles, rp)
		ps.nopm = append(ps.nopm, byUsers)
	}
	if aa != 0 {
		_, byUsers, err := loadRounds(ctx, st, aa, inc)
		if err != nil {
			return nil, err
		}
		for users, rounds := range byUsers {
			for _, v := range rounds {
				ps.aa[users] = v
			}
		}
	}
	return ps, nil
}

// loadRounds reads one profile and the NOPM of its counting runs by
// users and round (the run's repeat).
func loadRounds(ctx context.Context, st *store.Store, id int64, inc report.Include) (report.Profile, map[int]map[int]float64, error) {
	p, err := st.GetProfile(ctx, id)
	if err != nil {
		return report.Profile{}, nil, &scenario.StoreError{Op: fmt.Sprintf("read profile %d", id), Err: err}
	}
	rp, err := results.Profile(ctx, st, p, inc)
	if err != nil {
		return report.Profile{}, nil, err
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: id, Counting: true})
	if err != nil {
		return report.Profile{}, nil, &scenario.StoreError{Op: fmt.Sprintf("read the runs of profile %d", id), Err: err}
	}
	round := map[int64]int{}
	for _, r := range runs {
		round[r.ID] = r.Repeat
	}
	out := map[int]map[int]float64{}
	for _, s := range rp.Steps {
		out[s.VUs] = map[int]float64{}
		for _, r := range s.Repeats {
			if r.Partial || r.Failures || r.Suspect && !r.Counted {
				continue
			}
			out[s.VUs][round[r.RunID]] = r.NOPM
		}
	}
	return rp, out, nil
}

// pairedRow is one target's comparison with the baseline at one step.
type pairedRow struct {
	users    int
	target   string
	paired   profile.PairedCI
	unpaired profile.RatioCI
}

// rows compares every target with the baseline at every step both ran.
func (ps *pairedSet) rows() []pairedRow {
	var out []pairedRow
	for _, s := range ps.profiles[0].Steps {
		for t := 1; t < len(ps.names); t++ {
			other, ok := stepAt(ps.profiles[t], s.VUs)
			if !ok {
				continue
			}
			num, den := pairsOf(ps.nopm[t][s.VUs], ps.nopm[0][s.VUs])
			out = append(out, pairedRow{users: s.VUs, target: ps.names[t], paired: profile.Paired(num, den),
				unpaired: profile.Ratio(other.NOPM, s.NOPM)})
		}
	}
	return out
}

func stepAt(p report.Profile, users int) (report.Step, bool) {
	for _, s := range p.Steps {
		if s.VUs == users {
			return s, true
		}
	}
	return report.Step{}, false
}

// drift is the A/A check at every step the baseline measured again.
func (ps *pairedSet) drift() map[int]profile.Drift {
	out := map[int]profile.Drift{}
	for users, again := range ps.aa {
		if s, ok := stepAt(ps.profiles[0], users); ok {
			out[users] = profile.AACheck(s.CountedNOPM(), again)
		}
	}
	return out
}

// headline is the paired ratios at the largest step: "b/a NOPM at 4
// VUs, paired: 0.52× (95% CI 0.50–0.54, 5 pairs); A/A: no host drift".
func (ps *pairedSet) headline() string {
	rows := ps.rows()
	if len(rows) == 0 {
		return ""
	}
	top := rows[len(rows)-1].users
	var parts []string
	for _, r := range rows {
		if r.users == top && r.paired.Defined {
			parts = append(parts, fmt.Sprintf("%s/%s NOPM at %d VUs, paired: %s", r.target, ps.names[0], r.users, pairedText(r.paired)))
		}
	}
	drifted, checked := 0, 0
	for _, d := range ps.drift() {
		if d.Defined {
			checked++
			if d.Drifted {
				drifted++
			}
		}
	}
	switch {
	case drifted > 0:
		parts = append(parts, fmt.Sprintf("A/A: HOST DRIFT at %d of %d steps", drifted, checked))
	case checked > 0:
		parts = append(parts, "A/A: no host drift")
	}
	return strings.Join(parts, "; ")
}

// pairedText is a paired ratio with its interval: "0.52× (95% CI
// 0.50–0.54, 5 pairs)".
func pairedText(p profile.PairedCI) string {
	switch {
	case !p.Defined:
		return "—"
	case p.TooFew:
		return fmt.Sprintf("%.2f× (%d pairs: too few runs for an interval)", p.Ratio, p.Pairs)
	}
	sig := ""
	if !p.Significant {
		sig = ", not significant"
	}
	return fmt.Sprintf("%.2f× (95%% CI %.2f–%.2f, %d pairs%s)", p.Ratio, p.Lo, p.Hi, p.Pairs, sig)
}

func unpairedText(r profile.RatioCI) string {
	switch {
	case !r.Defined:
		return "—"
	case r.TooFew:
		return fmt.Sprintf("%.2f× (too few runs for an interval)", r.Ratio)
	case !r.HasCI:
		return fmt.Sprintf("%.2f×", r.Ratio)
	}
	sig := ""
	if !r.Significant {
		sig = ", not significant"
	}
	return fmt.Sprintf("%.2f× (95%% CI %.2f–%.2f%s)", r.Ratio, r.Lo, r.Hi, sig)
}

// pairedMethod explains the paired analysis in the report's method part.
const pairedMethod = "Paired comparison (interleave: targets): the runs alternate between the targets, round after round, each " +
	"step once per target per round, the baseline first in one round and last in the next (A B, B A, ...), all with the seed of " +
	"the round, so a run of the baseline and a run of another target at the same step and round are a pair measured one after the " +
	"other on the same inputs. The paired ratio is the geometric mean of the pairs' ratios with the 95% interval of the mean of " +
	"their logarithms (Student's t at pairs − 1 degrees of freedom): what slowly changes the host's speed over the experiment " +
	"(another tenant, a cache, heat) changes both runs of a pair alike and cancels in their ratio, so a drifting host widens the " +
	"unpaired interval, which is shown beside it, but not the paired one. A pair one of whose runs does not count (suspect, partial, " +
	"failed) is left out."

// aaMethod explains the A/A check.
const aaMethod = "A/A check (aa_check): after all rounds the baseline is measured once more at each step, with the seed of its " +
	"first run there. Its NOPM is set against the 95% prediction interval of one more run from the baseline's runs of the step, " +
	"exp(m ∓ t·s·√(1 + 1/n)) over the logarithms of its n runs: a run outside it says the host (or the baseline) changed during the " +
	"experiment, reported as host drift; inside it, the host held still as far as the runs can tell."

// pairedSection is a paired profile step's part of the report: every
// target's profile (drawn as a per-target step's), the paired and
// unpaired ratios to the baseline per step, and the A/A check.
func (s *profileStep) pairedSection(ctx context.Context, rc *ReportContext, u store.ExperimentStep) (report.Section, error) {
	var sec report.Section
	var oc Outcome
	if len(u.Outcome) > 0 {
		_ = json.Unmarshal(u.Outcome, &oc)
	}
	ids := map[string]int64{}
	var names []string
	var missing []string
	for _, name := range rc.Order {
		p, ok := rc.ProfileLabeled(u.Seq, rc.Params.Name+"/"+name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		ids[name] = p.ID
		names = append(names, name)
	}
	var aa int64
	if p, ok := rc.ProfileLabeled(u.Seq, aaLabel(rc.Params.Name, rc.Params.Baseline)); ok {
		aa = p.ID
	}
	if len(names) == 0 {
		sec.Note = "No measured run."
		return sec, nil
	}
	ps, err := loadPaired(ctx, rc.Store, ids, aa, names, rc.Include)
	if err != nil {
		return sec, err
	}
	for i, rp := range ps.profiles {
		if len(rp.Steps) == 0 {
			continue
		}
		if t, ok := rc.Target(names[i]); ok {
			rp.Target = t.Display
		}
		sec.Profiles = append(sec.Profiles, rp)
	}
	if err := rc.alignSeries(ctx, sec.Profiles); err != nil {
		return sec, err
	}
	var notes []string
	if len(missing) > 0 {
		notes = append(notes, "No measured run on "+strings.Join(missing, ", ")+".")
	}
	if names[0] != rc.Params.Baseline {
		notes = append(notes, fmt.Sprintf("The baseline %s has no measured run here: ratios are taken against %s.", rc.Params.Baseline, names[0]))
	}
	t := report.Table{Title: "Paired comparison with " + names[0],
		Note: "Runs alternated between the targets; each pair is a run of " + names[0] + " and a run of the other target at the same step, " +
			"one after the other. Paired: the geometric mean of the pairs' NOPM ratios with its 95% interval; unpaired: the ratio of " +
			"the mean NOPM with its 95% interval on the log scale, which a host that drifts over the experiment widens.",
		Header: []string{"VUs", "Target", "Pairs", "Paired NOPM ratio", "Unpaired NOPM ratio"},
		Right:  []bool{true, false, true, false, false}}
	for _, r := range ps.rows() {
		t.Rows = append(t.Rows, []string{strconv.Itoa(r.users), r.target, strconv.Itoa(r.paired.Pairs), pairedText(r.paired), unpairedText(r.unpaired)})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Method = []string{pairedMethod}
	if aa != 0 {
		sec.Method = append(sec.Method, aaMethod)
		at := report.Table{Title: "A/A check: " + names[0] + " measured again at the end",
			Note:   "The baseline's NOPM measured once more after all rounds, against the 95% prediction interval of one more run from its runs of the step. Outside it: the host drifted.",
			Header: []string{"VUs", "Runs before", "NOPM again", "95% prediction interval", "Change", "Verdict"},
			Right:  []bool{true, true, true, true, true, false}}
		drift := ps.drift()
		var drifted []string
		for _, st := range ps.profiles[0].Steps {
			d, ok := drift[st.VUs]
			if !ok {
				continue
			}
			verdict, pi, change := "too few runs", "—", "—"
			if d.Defined {
				pi = fmt.Sprintf("%s–%s", fmtNum(d.Lo), fmtNum(d.Hi))
				change = fmt.Sprintf("%+.1f%%", 100*d.Change)
				verdict = "held"
				if d.Drifted {
					verdict = "HOST DRIFT"
					drifted = append(drifted, strconv.Itoa(st.VUs))
				}
			}
			at.Rows = append(at.Rows, []string{strconv.Itoa(st.VUs), strconv.Itoa(d.N), fmtNum(d.Again), pi, change, verdict})
		}
		sec.Tables = append(sec.Tables, at)
		if len(drifted) > 0 {
			notes = append(notes, fmt.Sprintf("Host drift: the A/A check found %s's NOPM outside what its runs predict at %s VUs: the host changed during the experiment, and unpaired ratios mix conditions.",
				names[0], strings.Join(drifted, ", ")))
		}
	}
	sec.Note = strings.Join(notes, " ")
	if h := ps.headline(); h != "" {
		in := ""
		if rc.profileSteps() > 1 {
			in = " (" + u.Kind + " step " + strconv.Itoa(u.StepIndex+1) + ")"
		}
		sec.Findings = append(sec.Findings, h+in+" (each ratio from pairs of runs measured one after the other; see the paired comparison table).")
	}
	return sec, nil
}

// profileSteps counts the plan's profile steps.
func (rc *ReportContext) profileSteps() int {
	n := 0
	for _, sp := range rc.Params.Steps {
		if sp.Kind == "profile" {
			n++
		}
	}
	return n
}
