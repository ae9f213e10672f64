package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// Reporter is implemented by a Step whose kind contributes a section to
// the experiment's report.
type Reporter interface {
	Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error)
}

// ReportContext is what a step's report section may read: the stored
// experiment, its plan as understood (Params), its schedule and the
// profiles and runs it measured, with the targets in report order (the
// baseline first).
type ReportContext struct {
	Store      *store.Store
	Experiment store.Experiment
	Params     Params
	Steps      []store.ExperimentStep
	// Order is the targets' names, the baseline first, then plan order.
	Order []string
	// Include counts suspect and contaminated runs in statistics, peaks
	// and verdicts (they are always shown).
	Include report.Include
	// runs are the experiment's counting runs, newest first.
	runs     []store.Run
	profiles []store.Profile
}

// Units returns the stored (target, step) entries of the plan step index.
func (rc *ReportContext) Units(index int) []store.ExperimentStep {
	var out []store.ExperimentStep
	for _, s := range rc.Steps {
		if s.StepIndex == index {
			out = append(out, s)
		}
	}
	return out
}

// Target returns the plan's description of a target.
func (rc *ReportContext) Target(name string) (TargetParams, bool) {
	for _, t := range rc.Params.Targets {
		if t.Name == name {
			return t, true
		}
	}
	return TargetParams{}, false
}

// Runs returns the counting runs of one schedule entry, of one kind,
// newest first.
func (rc *ReportContext) Runs(seq int, kind store.Kind) []store.Run {
	var out []store.Run
	for _, r := range rc.runs {
		if r.ExperimentSeq == seq && r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// lastSummary decodes (with the kind's decoder) the summary of the first
// finished (ok or partial) run of kind at seq that has one, as Runs
// orders them; nil when none. what names the run in a decode error
// ("rebuild").
func lastSummary[T any](rc *ReportContext, seq int, kind store.Kind, what string, decode func([]byte) (T, error)) (*T, error) {
	for _, r := range rc.Runs(seq, kind) {
		if (r.Status != store.StatusOK && r.Status != store.StatusPartial) || len(r.Summary) == 0 {
			continue
		}
		v, err := decode(r.Summary)
		if err != nil {
			return nil, &scenario.StoreError{Op: fmt.Sprintf("decode %s %d", what, r.ID), Err: err}
		}
		return &v, nil
	}
	return nil, nil
}

// Profile returns the newest profile of one schedule entry.
func (rc *ReportContext) Profile(seq int) (store.Profile, bool) {
	for _, p := range rc.profiles {
		if p.ExperimentSeq == seq {
			return p, true
		}
	}
	return store.Profile{}, false
}

// ProfileLabeled returns the profile of one schedule entry with a label
// (a step over all targets stores one per target).
func (rc *ReportContext) ProfileLabeled(seq int, label string) (store.Profile, bool) {
	for _, p := range rc.profiles {
		if p.ExperimentSeq == seq && p.Label == label {
			return p, true
		}
	}
	return store.Profile{}, false
}

// inOrder sorts schedule entries by the report's target order.
func (rc *ReportContext) inOrder(units []store.ExperimentStep) []store.ExperimentStep {
	units = slices.Clone(units)
	slices.SortStableFunc(units, func(a, b store.ExperimentStep) int {
		return slices.Index(rc.Order, a.Target) - slices.Index(rc.Order, b.Target)
	})
	return units
}

// Report reads experiment id from the store into the report model: its
// targets (with the context recorded about each), its schedule, and one
// section per step of its plan as the step's kind reports it. Suspect and
// contaminated runs are shown, and counted only as inc says.
func Report(ctx context.Context, st *store.Store, id int64, inc report.Include) (report.Input, error) {
	e, err := st.GetExperiment(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return report.Input{}, &results.RefError{What: "experiment", Ref: strconv.FormatInt(id, 10), Err: errors.New("no experiment with that id (see `oltplab experiment list`)")}
		}
		return report.Input{}, &scenario.StoreError{Op: "read the experiment", Err: err}
	}
	rc := &ReportContext{Store: st, Experiment: e, Include: inc}
	if err := json.Unmarshal(e.Params, &rc.Params); err != nil {
		return report.Input{}, &scenario.StoreError{Op: fmt.Sprintf("decode the plan of experiment %d", id), Err: err}
	}
	if rc.Steps, err = st.ExperimentSteps(ctx, id); err != nil {
		return report.Input{}, &scenario.StoreError{Op: "read the experiment's steps", Err: err}
	}
	if rc.runs, err = st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Counting: true}); err != nil {
		return report.Input{}, &scenario.StoreError{Op: "read the experiment's runs", Err: err}
	}
	if rc.profiles, err = st.ListProfiles(ctx, store.ProfileFilter{ExperimentID: id}); err != nil {
		return report.Input{}, &scenario.StoreError{Op: "read the experiment's profiles", Err: err}
	}
	p := rc.Params
	rc.Order = []string{p.Baseline}
	for _, t := range p.Targets {
		if t.Name != p.Baseline {
			rc.Order = append(rc.Order, t.Name)
		}
	}
	out := &report.Experiment{ID: e.ID, Name: e.Name, Description: p.Description, Question: p.Question, Status: string(e.Status), Baseline: p.Baseline}
	for _, name := range rc.Order {
		t, _ := rc.Target(name)
		full := rc.targetContext(t)
		out.Targets = append(out.Targets, report.ExperimentTarget{Name: t.Name, Display: t.Display, Dialect: t.Dialect,
			Context: relevant(full), FullContext: full})
	}
	for _, s := range rc.Steps {
		var oc Outcome
		if len(s.Outcome) > 0 {
			_ = json.Unmarshal(s.Outcome, &oc) // a headline is a nicety
		}
		out.Schedule = append(out.Schedule, report.ScheduleEntry{Seq: s.Seq, Target: s.Target, Step: s.Kind, State: string(s.State),
			Attempts: s.Attempts, Headline: oc.Headline, Error: s.Error})
	}
	// The last profile step that measured something is what the cost
	// table prices.
	var priced map[string]report.Profile
	pricedStep := ""
	out.Method = []string{fmt.Sprintf("Scale: %d warehouses.", p.Warehouses)}
	if p.Warehouses == 0 {
		out.Method = []string{"Scale: no TPC-C schema; each step states its own (a TPC-H step its scale factor)."}
	}
	for i, sp := range p.Steps {
		title := fmt.Sprintf("Step %d: %s", i+1, sp.Describe)
		kind := plan.LookupKind(sp.Kind)
		var sec report.Section
		if kind != nil {
			if r, ok := kind.New().(Reporter); ok {
				if sec, err = r.Section(ctx, rc, i); err != nil {
					return report.Input{}, err
				}
			}
		}
		sec.Title, sec.Kind = title, sp.Kind
		// A kind that states nothing in the summary states the headline
		// each (target, step) stored.
		if len(sec.Findings) == 0 && len(sec.Profiles) == 0 {
			sec.Findings = stepFallback(rc, i, title)
		}
		out.Sections = append(out.Sections, sec)
		if len(sec.Profiles) > 0 {
			priced, pricedStep = map[string]report.Profile{}, title
			for _, rp := range sec.Profiles {
				priced[rp.Label] = rp
			}
		}
		out.Method = append(out.Method, title)
		out.Method = append(out.Method, sec.Method...)
	}
	out.Method = append(out.Method, rc.placementLines()...)
	out.Cost = rc.costTable(priced, pricedStep)
	return report.Input{Experiment: out}, nil
}

// ignoredContext are recorded facts that differ between any two targets
// without saying anything about them: ids, times, seeds, ports, pids,
// the tool, and paths that hold the target's name (the storage under
// them is recorded on its own), and the host's newest CPU calibration
// (a measurement of its own step, not a property of the target).
var ignoredContext = []string{"experiment.", "tool.", "notes.", "schema.", "database.target", "calibration.",
	"instance.id", "instance.server.pid", "instance.server.port", "instance.started", "instance.restarts",
	"instance.engine_dir", "instance.wal_dir", "instance.controls", "instance.notes",
	"instance.spec.name", "instance.spec.data_dir", "instance.spec.wal_dir", "instance.spec.port", "storage.Path",
	// Files and sockets in the instance's private run directory.
	"instance.settings.port", "instance.settings.hba_file", "instance.settings.ident_file",
	"instance.settings.unix_socket_directories", "instance.settings.socket", "instance.settings.pid_file",
	// The data device again (storage.* has it; instance.devices.wal stays).
	"instance.devices.data."}

func ignored(key string) bool {
	for _, p := range ignoredContext {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return strings.HasSuffix(key, ".Path") || strings.HasSuffix(key, "data_directory")
}

// targetContext is what was recorded about a target, flattened: the
// instance it was given (from the plan) and the context of its first
// counting run (host, storage, database version and settings).
func (rc *ReportContext) targetContext(t TargetParams) map[string]string {
	out := map[string]string{}
	if t.Instance != nil {
		// As the instance's description records it (a run's context
		// replaces it with the description itself).
		for k, v := range results.Flatten(scenario.JSON(t.Instance)) {
			out["instance.spec."+k] = v
		}
	}
	seqs, over := map[int]bool{}, map[int]bool{}
	for _, s := range rc.Steps {
		switch s.Target {
		case t.Name:
			seqs[s.Seq] = true
		case "":
			over[s.Seq] = true
		}
	}
	var first *store.Run
	for i := len(rc.runs) - 1; i >= 0; i-- {
		r := &rc.runs[i]
		// A step over all targets stores each target's runs with the
		// target's name in their context.
		mine := seqs[r.ExperimentSeq] || over[r.ExperimentSeq] && runTarget(r) == t.Name
		if mine && (first == nil || r.Kind == store.KindRun && first.Kind != store.KindRun) {
			first = r
		}
	}
	if first != nil {
		for k, v := range results.Flatten(first.Context) {
			out[k] = v
		}
	}
	return out
}

// relevant leaves out of ctx the keys that differ between any two
// targets without saying anything about them (see ignoredContext).
func relevant(ctx map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range ctx {
		if !ignored(k) {
			out[k] = v
		}
	}
	return out
}

// runTarget is the target a run of a step over all targets measured, as
// its context names it ("" for the step's own runs).
func runTarget(r *store.Run) string {
	var c struct {
		Experiment *scenario.ExperimentContext `json:"experiment"`
	}
	if json.Unmarshal(r.Context, &c) != nil || c.Experiment == nil {
		return ""
	}
	return c.Experiment.Target
}
