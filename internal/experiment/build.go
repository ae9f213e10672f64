package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func init() {
	plan.Register(plan.Kind{Name: "build", Scope: plan.PerTarget,
		Summary: "create and load the TPC-C schema of the plan's warehouses (options: workers, drop, seed)",
		New:     func() plan.Step { return &buildStep{BuildOptions: BuildOptions{Workers: 4}} }})
}

// What the build kind is, checked by the compiler.
var (
	_ Step                = (*buildStep)(nil)
	_ Reporter            = (*buildStep)(nil)
	_ plan.ConnectionUser = (*buildStep)(nil)
	_ plan.TargetChecker  = (*buildStep)(nil)
)

// BuildOptions are the options of a build step, as a plan's build section
// writes them.
//
//	build:
//	  workers: 4   # parallel load connections (SQLite uses 1)
//	  drop: true   # rebuild over an existing schema (otherwise it is an error)
//	  seed: 7      # the population's seed (default: drawn and recorded)
type BuildOptions struct {
	Workers int    `yaml:"workers"`
	Drop    bool   `yaml:"drop"`
	Seed    uint64 `yaml:"seed,omitempty"`
}

// buildStep builds the plan's warehouses on one target (scenario.Env.Build).
type buildStep struct {
	BuildOptions `yaml:",inline"`

	warehouses int
}

// buildProgress is what a build saves: that it started changing the
// database, so that a resumed build knows to drop what it left.
type buildProgress struct {
	Changed bool `json:"changed"`
}

// buildSecondsPerWarehouse is how long a build of one warehouse takes
// per dialect, for estimates: measured builds on a 2-core machine, rounded
// up. The space one takes is scenario.BuildBytesPerWarehouse.
var buildSecondsPerWarehouse = map[string]float64{
	"sqlite":   12,
	"postgres": 25,
	"mysql":    25,
}

func (b *buildStep) Prepare(p *plan.Plan) error {
	if b.Workers < 1 {
		return fmt.Errorf("workers must be at least 1, got %d", b.Workers)
	}
	b.warehouses = p.Warehouses
	return nil
}

func (b *buildStep) Describe() string {
	s := fmt.Sprintf("build %d warehouse(s) with %d worker(s)", b.warehouses, b.Workers)
	if b.Drop {
		s += ", dropping an existing schema"
	}
	return s
}

// Connections: the workers' load connections, or one per table where the
// dialect loads each table in one transaction (PostgreSQL's COPY FREEZE,
// dialect.LoaderGroup), and the metadata's.
func (b *buildStep) Connections(*plan.Plan) int { return max(b.Workers, len(tpcc.Tables)) + 1 }

func (b *buildStep) Estimate(p *plan.Plan, t *plan.TargetSpec) time.Duration {
	c, ok := buildSecondsPerWarehouse[t.Dialect()]
	if !ok {
		c = buildSecondsPerWarehouse["postgres"]
	}
	workers := float64(min(b.Workers, b.warehouses))
	if t.Dialect() == "sqlite" {
		workers = 1
	}
	return time.Duration(c * float64(b.warehouses) / workers * float64(time.Second))
}

// CheckTarget refuses a build whose data would not fit on the file
// system under the target's data.
func (b *buildStep) CheckTarget(p *plan.Plan, t *plan.TargetSpec) error {
	// A remote server's disk is not ours to see: LocalDir is "".
	return scenario.CheckBuildSpace(t.LocalDir(), t.Dialect(), b.warehouses, sysstat.FreeBytes)
}

func (b *buildStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	var prev buildProgress
	if len(x.Progress) > 0 {
		if err := json.Unmarshal(x.Progress, &prev); err != nil {
			return Outcome{}, fmt.Errorf("read the progress of the interrupted build: %w", err)
		}
	}
	seed := b.Seed
	if seed == 0 {
		seed = drawSeed()
	}
	o := load.Options{Warehouses: b.warehouses, Workers: b.Workers, Seed: seed, ToolVersion: x.Env.ToolVersion,
		// An interrupted build of this experiment left a half-built
		// schema: drop it.
		Drop: b.Drop || prev.Changed}
	saved := false
	var saveErr error
	env := *x.Env
	outer := env.Observer.BuildProgress
	env.Observer.BuildProgress = func(pr load.Progress) {
		if !saved && pr.Phase >= load.PhaseDrop {
			saved = true
			saveErr = x.Save(ctx, buildProgress{Changed: true})
		}
		if outer != nil {
			outer(pr)
		}
	}
	id, res, err := env.Build(ctx, x.Target.DB, x.Target.Target, o)
	if err == nil && saveErr != nil {
		err = saveErr
	}
	if err != nil {
		if errors.Is(err, load.ErrSchemaExists) {
			err = fmt.Errorf("%w (or set drop: true in the plan's build section)", err)
		}
		return Outcome{RunIDs: nonZero(id)}, err
	}
	return Outcome{RunIDs: []int64{id}, Headline: scenario.BuildSummary(res).Headline()}, nil
}

func nonZero(id int64) []int64 {
	if id == 0 {
		return nil
	}
	return []int64{id}
}

// SpaceError: the file system under a target's data has too little room
// for the plan's warehouses.
type SpaceError = scenario.BuildSpaceError

// Section is the build step's part of the report: each target's build,
// its size and how long each phase took.
func (b *buildStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "Builds",
		Note:   "The last complete build of each target in this step (rows/s is the load phase's rate).",
		Header: []string{"Target", "Warehouses", "Workers", "Rows", "Load s", "Indexes s", "Analyze s", "Total s", "Rows/s"},
		Right:  []bool{false, true, true, true, true, true, true, true, true}}
	for _, u := range rc.inOrder(rc.Units(index)) {
		var res *summary.Build
		for _, r := range rc.Runs(u.Seq, store.KindBuild) {
			if r.Status != store.StatusOK || len(r.Summary) == 0 {
				continue
			}
			b, err := summary.DecodeBuild(r.Summary)
			if err != nil {
				return report.Section{}, &scenario.StoreError{Op: fmt.Sprintf("decode build %d", r.ID), Err: err}
			}
			res = &b
			break
		}
		if res == nil {
			t.Rows = append(t.Rows, []string{u.Target, "—", "—", "—", "—", "—", "—", "—", string(u.State)})
			continue
		}
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
		t.Rows = append(t.Rows, []string{u.Target, strconv.Itoa(res.Warehouses), strconv.Itoa(res.Workers),
			strconv.FormatInt(res.TotalRows, 10), f(res.LoadSeconds), f(res.IndexSeconds), f(res.AnalyzeSeconds),
			f(res.TotalSeconds), strconv.FormatFloat(res.RowsPerSec, 'f', 0, 64)})
	}
	return report.Section{Tables: []report.Table{t}}, nil
}
