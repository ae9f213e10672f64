package experiment

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchdriver"
	"github.com/oltplab/oltplab/internal/tpchload"
)

func init() {
	plan.Register(plan.Kind{Name: "tpch", Scope: plan.PerTarget, NoWarehouses: true,
		Summary: "the analytic workload, as `oltplab tpch build` and `tpch run`: build TPC-H at a scale factor when the target does not hold it, then the power and/or throughput tests (options: scale, test, streams, repeat, query_timeout, workers)",
		New:     func() plan.Step { return &tpchStep{Scale: "0.1", Test: tpchdriver.Both, Streams: 2, Repeat: 1} }})
}

var (
	_ Step                = (*tpchStep)(nil)
	_ Reporter            = (*tpchStep)(nil)
	_ plan.ConnectionUser = (*tpchStep)(nil)
)

// tpchStep is the analytic workload on one target: a TPC-H build at the
// step's scale when the target does not hold one (scenario.Env.TPCHBuild;
// a TPC-H schema of oltplab's at another scale is rebuilt), then the
// tests of clause 5 repeated (scenario.Env.TPCH), each run its own result.
//
//	tpch:
//	  scale: 0.1            # scale factor (0.01 upwards)
//	  test: both            # power, throughput or both (QphH@Size)
//	  streams: 2            # query streams of the throughput test
//	  repeat: 1             # runs of the tests
//	  query_timeout: 0s     # cut off a longer query (recorded as such)
//	  workers: 0            # build workers (0: one per CPU)
//	  seed: 0               # qgen seed of stream 0 (0: one from the experiment's name)
//
// Every target runs the same parameters: the seed is the step's, not
// each build's (which clause 2.1.3.3 would take from the load's end, and
// so differ between targets).
type tpchStep struct {
	Scale        string          `yaml:"scale"`
	Test         tpchdriver.Test `yaml:"test"`
	Streams      int             `yaml:"streams"`
	Repeat       int             `yaml:"repeat"`
	QueryTimeout time.Duration   `yaml:"query_timeout"`
	Workers      int             `yaml:"workers"`
	Seed         int64           `yaml:"seed"`

	scale      tpch.Scale
	experiment string
}

func (s *tpchStep) Prepare(p *plan.Plan) error {
	sc, err := tpch.ParseScale(s.Scale)
	if err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	s.scale = sc
	if s.Repeat < 1 {
		return fmt.Errorf("repeat must be at least 1, got %d", s.Repeat)
	}
	if s.Workers < 0 {
		return fmt.Errorf("workers must be 0 (one per CPU) or more, got %d", s.Workers)
	}
	if s.Seed == 0 {
		h := fnv.New32a()
		h.Write([]byte(p.Name))
		s.Seed = int64(h.Sum32()%(1<<31-2)) + 1
	}
	if err := s.options().Validate(); err != nil {
		return err
	}
	s.experiment = p.Name
	return nil
}

func (s *tpchStep) options() tpchdriver.Options {
	o := tpchdriver.Options{Test: s.Test, QueryTimeout: s.QueryTimeout, Seed: s.Seed}
	if s.Test.HasThroughput() {
		o.Streams = s.Streams
	}
	return o
}

func (s *tpchStep) Describe() string {
	d := fmt.Sprintf("TPC-H SF %s: %s test", s.Scale, s.Test)
	if s.Test == tpchdriver.Both {
		d = fmt.Sprintf("TPC-H SF %s: power and throughput tests", s.Scale)
	}
	if s.Test.HasThroughput() {
		d += fmt.Sprintf(", %d stream(s)", s.Streams)
	}
	return fmt.Sprintf("%s × %d", d, s.Repeat)
}

func (s *tpchStep) Connections(*plan.Plan) int {
	return max(s.Streams+2, s.Workers+2, 4)
}

// tpchSecondsPerSF is a build and one query stream per unit of scale
// factor on the 2-core test machine under load, rounded up: at SF 0.1 a
// PostgreSQL build took 40–56 s and a performance test with 2 streams
// 35–56 s (examples/tpch-tiers.yaml).
const tpchSecondsPerSF = 300

func (s *tpchStep) Estimate(*plan.Plan, *plan.TargetSpec) time.Duration {
	streams := 1
	if s.Test.HasThroughput() {
		streams += s.Streams
	}
	sec := tpchSecondsPerSF * s.scale.Float() * float64(1+s.Repeat*streams)
	return time.Duration(max(sec, 30)) * time.Second
}

func (s *tpchStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	if err := supersedeEarlier(ctx, x, "the TPC-H step started over"); err != nil {
		return Outcome{}, err
	}
	var oc Outcome
	label := s.experiment + "/" + x.Target.Spec.Name
	m, err := tpchload.ReadMeta(ctx, x.Target.DB)
	switch {
	case err == nil && m.Scale == s.scale:
	case err == nil || errors.Is(err, tpchload.ErrNoSchema) || errors.Is(err, tpchload.ErrIncompleteSchema):
		// Not built, half built, or at another scale: a schema of
		// oltplab's is replaced, anything else refused by the build.
		id, _, berr := x.Env.TPCHBuild(ctx, x.Target.DB, x.Target.Target,
			tpchload.Options{Scale: s.scale, Workers: s.Workers, Drop: err == nil || errors.Is(err, tpchload.ErrIncompleteSchema)})
		oc.RunIDs = append(oc.RunIDs, nonZero(id)...)
		if berr != nil {
			return oc, berr
		}
	default:
		return oc, err
	}
	for rep := 1; rep <= s.Repeat; rep++ {
		out, err := x.Env.TPCH(ctx, x.Target.DB, x.Target.Target, scenario.TPCHOptions{Options: s.options(), Label: label, Repeat: rep})
		oc.RunIDs = append(oc.RunIDs, nonZero(out.RunID)...)
		if out.RunID != 0 {
			oc.Headline = out.TPCH.Headline()
		}
		if err != nil {
			return oc, err
		}
	}
	if s.Repeat > 1 {
		oc.Headline = fmt.Sprintf("%s (last of %d)", oc.Headline, s.Repeat)
	}
	return oc, nil
}

// tpchRuns are the tests a target measured in one step: the summaries of
// its ok runs, oldest first.
func tpchRuns(rc *ReportContext, seq int) ([]summary.TPCH, error) {
	var out []summary.TPCH
	runs := rc.Runs(seq, store.KindTPCH)
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.Status != store.StatusOK || len(r.Summary) == 0 {
			continue
		}
		s, err := summary.DecodeTPCH(r.Summary)
		if err != nil {
			return nil, &scenario.StoreError{Op: fmt.Sprintf("decode TPC-H run %d", r.ID), Err: err}
		}
		out = append(out, s)
	}
	return out, nil
}

// tpchSpread is the mean of xs with their least and largest ("—" for none).
func tpchSpread(xs []float64, format string) string {
	if len(xs) == 0 {
		return "—"
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range xs {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	mean := fmt.Sprintf(format, sum/float64(len(xs)))
	if len(xs) == 1 {
		return mean
	}
	return fmt.Sprintf("%s ("+format+"–"+format+")", mean, lo, hi)
}

func tpchMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// tpchRatio is a against the baseline b, as "×1.25" ("—" without both).
func tpchRatio(a, b []float64) string {
	if len(a) == 0 || len(b) == 0 || tpchMean(b) == 0 {
		return "—"
	}
	return "×" + strconv.FormatFloat(tpchMean(a)/tpchMean(b), 'f', 2, 64)
}

// Section is the TPC-H step's part of the report: per target the figures
// of clause 5.4 (mean over the repeats with their range) against the
// first target's, and each query's power-test interval against the first
// target's, the query-time ratios that show where a tier or a memory
// size matters.
func (s *tpchStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	var targets []TPCHTarget
	for _, u := range rc.inOrder(rc.Units(index)) {
		runs, err := tpchRuns(rc, u.Seq)
		if err != nil {
			return report.Section{}, err
		}
		targets = append(targets, TPCHTarget{Name: u.Target, Runs: runs})
	}
	sec, clauses := TPCHSection(s.Scale, targets)
	sec.Answers = answersOf(rc, clauses)
	return sec, nil
}

// TPCHTarget is one column of a TPC-H comparison: a target's runs (its
// repeats), or one stored result.
type TPCHTarget struct {
	Name string
	Runs []summary.TPCH
}

// TPCHSection compares TPC-H results, the first target the baseline: the
// figures table, the power test's query intervals, the bar charts and a
// finding per target; clauses are each target's headline figure, for a
// summary's answers. scale is used when no run says its own.
func TPCHSection(scale string, targets []TPCHTarget) (sec report.Section, clauses map[string]string) {
	type target struct {
		name                    string
		power, throughput, qphh []float64
		queries                 [tpch.Queries][]float64
		// streamQueries are the throughput test's intervals by stream
		// number, then query.
		streamQueries           map[int]*[tpch.Queries][]float64
		absent                  string
		runs, timedOut, streams int
	}
	var ts []target
	for _, tg := range targets {
		t := target{name: tg.Name, runs: len(tg.Runs)}
		for _, r := range tg.Runs {
			scale = r.Scale
			if r.Power != nil {
				if r.Power.Power != nil {
					t.power = append(t.power, *r.Power.Power)
				} else {
					t.absent = r.Power.Absent
				}
				for _, q := range r.Power.Stream.Queries {
					switch q.Outcome {
					case tpch.Done:
						t.queries[q.Query-1] = append(t.queries[q.Query-1], q.Interval)
					case tpch.TimedOut:
						t.timedOut++
					}
				}
			}
			if r.Throughput != nil {
				t.streams = len(r.Throughput.Streams)
				for _, st := range r.Throughput.Streams {
					if t.streamQueries == nil {
						t.streamQueries = map[int]*[tpch.Queries][]float64{}
					}
					if t.streamQueries[st.Stream] == nil {
						t.streamQueries[st.Stream] = new([tpch.Queries][]float64)
					}
					for _, q := range st.Queries {
						if q.Outcome == tpch.Done {
							t.streamQueries[st.Stream][q.Query-1] = append(t.streamQueries[st.Stream][q.Query-1], q.Interval)
						}
					}
				}
				if r.Throughput.Throughput != nil {
					t.throughput = append(t.throughput, *r.Throughput.Throughput)
				} else if t.absent == "" {
					t.absent = r.Throughput.Absent
				}
			}
			if r.QphH != nil {
				t.qphh = append(t.qphh, *r.QphH)
			}
		}
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return report.Section{}, nil
	}
	base := ts[0]
	figures := report.Table{Title: fmt.Sprintf("TPROC-H figures at SF %s", scale),
		Note: tpchdriver.Label + ". Mean over the repeats (least–largest); ratios against " + base.name +
			" (higher is better). A query cut off by the timeout or failed enters no figure.",
		Header: []string{"Target", "Runs", "Power@Size", "ratio", "Throughput@Size", "streams", "ratio", "QphH@Size", "ratio", "Queries cut off", "Why absent"},
		Right:  []bool{false, true, true, true, true, true, true, true, true, true, false}}
	for _, t := range ts {
		figures.Rows = append(figures.Rows, []string{t.name, strconv.Itoa(t.runs),
			tpchSpread(t.power, "%.1f"), tpchRatio(t.power, base.power),
			tpchSpread(t.throughput, "%.1f"), strconv.Itoa(t.streams), tpchRatio(t.throughput, base.throughput),
			tpchSpread(t.qphh, "%.1f"), tpchRatio(t.qphh, base.qphh), strconv.Itoa(t.timedOut), t.absent})
	}
	queries := report.Table{Title: "Power test: each query's interval (s)",
		Note: "The interval of each query in the power test's stream 0 (clause 5.3.7.5: rounded to 0.1 s, at least 0.1 s), mean over the " +
			"repeats (least–largest), and its ratio to " + base.name + "'s (above 1: slower).",
		Header: []string{"Query"}}
	queries.Right = append(queries.Right, false)
	for i, t := range ts {
		queries.Header = append(queries.Header, t.name)
		queries.Right = append(queries.Right, true)
		if i > 0 {
			queries.Header = append(queries.Header, "ratio")
			queries.Right = append(queries.Right, true)
		}
	}
	for q := range tpch.Queries {
		row := []string{fmt.Sprintf("Q%d", q+1)}
		for i, t := range ts {
			row = append(row, tpchSpread(t.queries[q], "%.1f"))
			if i > 0 {
				row = append(row, tpchRatio(t.queries[q], base.queries[q]))
			}
		}
		queries.Rows = append(queries.Rows, row)
	}
	var names []string
	for _, t := range ts {
		names = append(names, t.name)
	}
	bars := []report.BarChart{tpchQueryBars("Power test: each query's interval",
		"Each query's interval in the power test (stream 0), mean over the repeats; the whisker spans the least to the largest when there are repeats. "+
			"Over each bar of a target other than "+base.name+": its ratio to "+base.name+"'s (above 1: slower). A query cut off or failed has no bar (n/a).",
		names, func(i int) *[tpch.Queries][]float64 { return &ts[i].queries })}
	streams := map[int]bool{}
	for _, t := range ts {
		for n := range t.streamQueries {
			streams[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(streams)) {
		bars = append(bars, tpchQueryBars(fmt.Sprintf("Throughput test, stream %d: each query's interval", n),
			fmt.Sprintf("Query stream %d of the throughput test, run at once with the other streams and the refresh stream; mean over the repeats, ratios against %s.", n, base.name),
			names, func(i int) *[tpch.Queries][]float64 { return ts[i].streamQueries[n] }))
	}
	sec = report.Section{Tables: []report.Table{figures, queries}, Bars: bars}
	clauses = map[string]string{}
	for i, t := range ts {
		var parts []string
		for _, f := range []struct {
			name     string
			xs, base []float64
		}{{"QphH@Size", t.qphh, base.qphh}, {"Power@Size", t.power, base.power}, {"Throughput@Size", t.throughput, base.throughput}} {
			if len(f.xs) == 0 {
				continue
			}
			p := fmt.Sprintf("%s %.1f", f.name, tpchMean(f.xs))
			if r := tpchRatio(f.xs, f.base); i > 0 && r != "—" {
				p += " (" + r + " " + base.name + ")"
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			why := t.absent
			if why == "" {
				why = "no run finished"
			}
			sec.Findings = append(sec.Findings, fmt.Sprintf("TPROC-H SF %s: %s has no figure (%s).", scale, t.name, why))
			continue
		}
		sec.Findings = append(sec.Findings, fmt.Sprintf("TPROC-H SF %s: %s %s.", scale, t.name, strings.Join(parts, ", ")))
		clauses[t.name] = "TPROC-H " + parts[0]
	}
	return sec, clauses
}

// tpchQueryBars charts each query's interval per target: the mean over
// the repeats, the range as a whisker when there are repeats, and over
// each bar but the first target's its ratio to the first target's.
// of(i) is target i's intervals by query (nil: the target has none).
func tpchQueryBars(title, note string, targets []string, of func(i int) *[tpch.Queries][]float64) report.BarChart {
	c := report.BarChart{Title: title + " (s)", Note: note, YLabel: "seconds"}
	for q := range tpch.Queries {
		c.Categories = append(c.Categories, fmt.Sprintf("Q%d", q+1))
	}
	base := of(0)
	for i, name := range targets {
		s := report.BarSeries{Label: name, Values: make([]*float64, tpch.Queries)}
		qs := of(i)
		ranged := false
		lo, hi := make([]*float64, tpch.Queries), make([]*float64, tpch.Queries)
		if i > 0 {
			s.Texts = make([]string, tpch.Queries)
		}
		for q := range tpch.Queries {
			if qs == nil || len(qs[q]) == 0 {
				continue
			}
			xs := qs[q]
			m, l, h := tpchMean(xs), slices.Min(xs), slices.Max(xs)
			s.Values[q], lo[q], hi[q] = &m, &l, &h
			ranged = ranged || len(xs) > 1
			if i > 0 && base != nil {
				if r := tpchRatio(xs, base[q]); r != "—" {
					s.Texts[q] = r
				}
			}
		}
		if ranged {
			s.Lo, s.Hi = lo, hi
		}
		c.Series = append(c.Series, s)
	}
	return c
}
