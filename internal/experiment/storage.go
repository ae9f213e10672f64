package experiment

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/yamldoc"
	"go.yaml.in/yaml/v3"
)

func init() {
	plan.Register(plan.Kind{Name: "storage", Scope: plan.PerTarget,
		Summary: "fio storage micro-benchmarks of the storage under the target's data directory, as `oltplab storage bench` (options: profile, runtime, size, fio_options)",
		New:     func() plan.Step { return &storageStep{Profile: profileList{list: "all"}} }})
}

// What the storage kind is, checked by the compiler.
var (
	_ Step               = (*storageStep)(nil)
	_ Reporter           = (*storageStep)(nil)
	_ plan.TargetChecker = (*storageStep)(nil)
)

var (
	_ Step               = (*storageStep)(nil)
	_ Reporter           = (*storageStep)(nil)
	_ plan.TargetChecker = (*storageStep)(nil)
)

// storageStep is `oltplab storage bench` (scenario.Env.Storage) on the
// directory a target's data lives in: a managed instance's data_dir, a
// SQLite file's directory. A target given by URL has no directory oltplab
// knows on this host: the step records that it measured nothing there.
//
// On a managed instance fio runs inside the instance's cgroups and on its
// CPUs (instance.RunInside), as its backups do: its io_limit caps fio as
// it caps the server, so the numbers are the storage as the instance gets
// it.
//
//	storage:
//	  profile: [oltp-4k-qd8, seq-write-128k]   # or "all" (default), or "a,b"
//	  runtime: 10s          # each profile's measured time (default: its own, 30s)
//	  size: 2G              # the test file (default: the host's memory)
//	  fio_options: [rwmixread=50]   # applied to every profile after its own
type storageStep struct {
	Profile    profileList   `yaml:"profile"`
	Runtime    time.Duration `yaml:"runtime"`
	Size       fileSize      `yaml:"size"`
	FioOptions []fio.Option  `yaml:"fio_options"`

	experiment string
}

// profileList is fio profiles written as a list or as one string ("all",
// "a,b").
type profileList struct {
	list     string
	profiles []fio.Profile
}

func (l *profileList) DecodeNode(d *yamldoc.Decoder, n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.ScalarNode:
		l.list = n.Value
	case yaml.SequenceNode:
		var names []string
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Value == "" {
				return d.Errorf(c, fmt.Sprintf("%s[%d]", path, i), "want a profile name, got %s", yamldoc.Describe(c))
			}
			names = append(names, c.Value)
		}
		if len(names) == 0 {
			return d.Errorf(n, path, "want at least one profile (or all)")
		}
		l.list = strings.Join(names, ",")
	default:
		return d.Errorf(n, path, "want a list of profiles or all, got %s", yamldoc.Describe(n))
	}
	ps, err := fio.LookupProfiles(l.list)
	if err != nil {
		return d.Errorf(n, path, "%v", err)
	}
	l.profiles = ps
	return nil
}

// fileSize is a test file's size as fio.ParseSize reads it ("2G").
type fileSize int64

func (s *fileSize) UnmarshalText(b []byte) error {
	n, err := fio.ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = fileSize(n)
	return nil
}

func (s *storageStep) options(dir string) fio.Options {
	return fio.Options{Dir: dir, Profiles: s.Profile.profiles, Runtime: s.Runtime, SizeBytes: int64(s.Size), Extra: s.FioOptions}
}

func (s *storageStep) Prepare(p *plan.Plan) error {
	if s.Profile.profiles == nil {
		ps, err := fio.LookupProfiles(s.Profile.list)
		if err != nil {
			return err
		}
		s.Profile.profiles = ps
	}
	// Everything but the directory, which each target gives.
	if err := s.options("-").Validate(); err != nil {
		return err
	}
	s.experiment = p.Name
	return nil
}

func (s *storageStep) Describe() string {
	names := make([]string, len(s.Profile.profiles))
	for i, p := range s.Profile.profiles {
		names[i] = p.Name
	}
	d := "fio " + strings.Join(names, ", ")
	if s.Runtime > 0 {
		d += fmt.Sprintf(", %s each", s.Runtime)
	}
	if s.Size > 0 {
		d += ", " + fio.FormatBytes(int64(s.Size)) + " test file"
	}
	return d + " under the target's data directory"
}

// CheckTarget refuses a directory fio's test file may not go to: one
// another user could put something in its place in (internal/claim), or a
// system directory. A directory that does not exist yet (a managed
// instance's, which its start creates) is judged by its nearest parent.
func (s *storageStep) CheckTarget(p *plan.Plan, t *plan.TargetSpec) error {
	dir := t.LocalDir()
	if dir == "" {
		return nil
	}
	if _, err := claim.CheckWithin(dir, nil); err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	return nil
}

// layoutMBps is how fast the test file is assumed to be written, for
// the estimate: the 2-core test VM's disk wrote 150-400 MB/s.
const layoutMBps = 100

func (s *storageStep) Estimate(p *plan.Plan, t *plan.TargetSpec) time.Duration {
	if t.LocalDir() == "" {
		return 0
	}
	var total time.Duration
	for _, pr := range s.Profile.profiles {
		rt := pr.Runtime
		if s.Runtime > 0 {
			rt = s.Runtime
		}
		total += rt + time.Second // fio's start and stop
	}
	size := int64(s.Size)
	if size == 0 {
		size = 16 << 30 // the host's memory, unknown here: a guess
	}
	return total + time.Duration(size/(layoutMBps*1e6))*time.Second
}

func (s *storageStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	dir := x.Target.Spec.LocalDir()
	if dir == "" {
		return Outcome{Headline: "not measured: " + storageSkipped}, nil
	}
	if err := supersedeEarlier(ctx, x, "the storage step started over"); err != nil {
		return Outcome{}, err
	}
	if rm := x.Target.Remote; rm != nil {
		return s.runRemote(ctx, x, rm)
	}
	o := s.options(dir)
	o.Logger = x.Env.Log
	o.Tracker = x.Env.Leftovers()
	if m := x.Target.Managed; m != nil {
		o.Runner = m.RunInside
	}
	b, err := fio.Prepare(ctx, o)
	if err != nil {
		return Outcome{}, err
	}
	defer func() {
		if cerr := b.Close(); cerr != nil && x.Env.Log != nil {
			x.Env.Log.Warn("storage: remove the test file", "err", cerr)
		}
	}()
	out, err := x.Env.Storage(ctx, b, s.experiment+"/"+x.Target.Spec.Name)
	return Outcome{RunIDs: nonZero(out.RunID), Headline: out.Storage.Headline()}, err
}

// runRemote runs the benchmark on the agent of the target's host, beside
// the instance's data, under this runner's lease of the instance, and
// stores what it measured as a local benchmark's. The run's placement
// says fio ran on the database's host.
func (s *storageStep) runRemote(ctx context.Context, x *Exec, rm *Remote) (Outcome, error) {
	req := agent.StorageRequest{Runtime: s.Runtime, SizeBytes: int64(s.Size), Extra: s.FioOptions}
	for _, p := range s.Profile.profiles {
		req.Profiles = append(req.Profiles, p.Name)
	}
	besideTheData(x.Env, "fio ran beside the data on the database's host")
	b, err := rm.Client.Storage(ctx, rm.Info.ID, req)
	if err != nil {
		return Outcome{}, fmt.Errorf("storage on host %s: %w", rm.Host.Name, err)
	}
	defer b.Close()
	out, err := x.Env.Storage(ctx, b, s.experiment+"/"+x.Target.Spec.Name)
	return Outcome{RunIDs: nonZero(out.RunID), Headline: out.Storage.Headline()}, err
}

// besideTheData records in env's placement that what measured ran on
// the database's host (by its agent): no driver, no round trip.
func besideTheData(env *scenario.Env, note string) {
	if h := env.Hosts; h != nil {
		fh := *h
		fh.Driver, fh.DriverAgent, fh.RTTMicros, fh.RTTNote = h.Database, h.DatabaseAgent, 0, note
		env.Hosts = &fh
	}
}

// storageSkipped is why a URL target's storage is not measured.
const storageSkipped = "a target given by URL has no data directory oltplab knows on this host"

// Section is the storage step's part of the report: per target and
// profile, each direction's IOPS, MB/s and completion latency, and its
// IOPS against the baseline target's in the same profile and direction.
func (s *storageStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "Storage micro-benchmarks (fio)",
		Note: "Per target, the last storage run of this step: fio on a test file in the target's data directory. MB/s: 10^6 bytes per second; " +
			"latency: fio's completion latency in ms. Vs baseline: IOPS against the baseline target's in the same profile and direction. " +
			"On a managed instance fio ran inside the instance's cgroups: its I/O caps (shown) held for fio as for the server; on one " +
			"with a latency layer fio ran through the layer, and its latency includes the layer's delays (shown).",
		Header: []string{"Target", "I/O caps or latency", "Profile", "Direction", "IOPS", "MB/s", "Mean ms", "p50 ms", "p99 ms", "p99.9 ms", "Vs baseline"},
		Right:  []bool{false, false, false, false, true, true, true, true, true, true, true}}
	type key struct{ profile, dir string }
	base := map[key]float64{}
	var notes []string
	var measured []storageOf
	for i, u := range rc.inOrder(rc.Units(index)) {
		sum, err := lastSummary(rc, u.Seq, store.KindStorage, "storage benchmark", summary.DecodeStorage)
		if err != nil {
			return report.Section{}, err
		}
		caps := "—"
		if tp, ok := rc.Target(u.Target); ok && tp.Instance != nil {
			caps = formatCaps(tp.Instance.IOLimit)
			if l := tp.Instance.Latency; l != nil {
				caps = "latency " + l.String()
			}
		}
		if sum == nil {
			t.Rows = append(t.Rows, []string{u.Target, caps, "—", "—", "—", "—", "—", "—", "—", "—", string(u.State)})
			if tp, ok := rc.Target(u.Target); ok && !tp.Managed && u.State == store.StepDone {
				notes = append(notes, u.Target+": not measured, "+storageSkipped+".")
			}
			continue
		}
		f := func(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }
		m := storageOf{target: u.Target, sum: *sum}
		if tp, ok := rc.Target(u.Target); ok && tp.Instance != nil {
			m.latency = tp.Instance.Latency
		}
		measured = append(measured, m)
		for _, p := range sum.Profiles {
			for _, d := range p.Directions {
				k := key{p.Profile, d.Direction}
				ratio := ""
				if i == 0 && u.Target == rc.Order[0] {
					base[k] = d.IOPS
				} else if b := base[k]; b > 0 {
					ratio = f(d.IOPS/b, 2) + "×"
				}
				l := d.CompletionLatency
				t.Rows = append(t.Rows, []string{u.Target, caps, p.Profile, d.Direction, f(d.IOPS, 0), f(d.MBPerSec, 1),
					f(l.MeanMillis, 3), f(l.P50Millis, 3), f(l.P99Millis, 3), f(l.P999Millis, 3), ratio})
			}
		}
		what := fio.FormatBytes(sum.FileSizeBytes) + " test file in " + sum.Dir
		if !sum.DirectIO {
			what += ", buffered I/O"
		}
		notes = append(notes, u.Target+": "+what+".")
		for _, n := range sum.Notes {
			notes = append(notes, u.Target+": "+n+".")
		}
	}
	sec := report.Section{Tables: []report.Table{t}, Note: strings.Join(notes, " ")}
	storageFindings(rc, &sec, measured)
	return sec, nil
}

type storageOf struct {
	target  string
	sum     summary.Storage
	latency *latency.Settings // the target's latency layer, nil for none
}

// storageFindings states each target's IOPS and p99 latency per fio
// profile against the baseline's, and draws IOPS and the latency
// percentiles per tier, with the p99 a latency layer was configured
// for beside the p99 fio measured through it.
func storageFindings(rc *ReportContext, sec *report.Section, ms []storageOf) {
	if len(ms) == 0 {
		return
	}
	type key struct{ profile, dir string }
	base := map[key]float64{}
	if ms[0].target == rc.Order[0] {
		for _, p := range ms[0].sum.Profiles {
			for _, d := range p.Directions {
				base[key{p.Profile, d.Direction}] = d.IOPS
			}
		}
	}
	clauses := map[string]string{}
	var cats []string
	type fig struct{ iops, p50, p99, p999, configured *float64 }
	figs := map[string]map[string]fig{} // target -> category -> figures
	for i, m := range ms {
		var parts []string
		figs[m.target] = map[string]fig{}
		for _, p := range m.sum.Profiles {
			for _, d := range p.Directions {
				cat := p.Profile + " " + d.Direction
				if !slices.Contains(cats, cat) {
					cats = append(cats, cat)
				}
				l := d.CompletionLatency
				part := fmt.Sprintf("%s %s %s IOPS", p.Profile, d.Direction, profile.FormatThousands(d.IOPS))
				if b := base[key{p.Profile, d.Direction}]; i > 0 && b > 0 {
					part += fmt.Sprintf(" (%.2f× %s)", d.IOPS/b, ms[0].target)
				}
				part += fmt.Sprintf(", p99 %s ms", strconv.FormatFloat(l.P99Millis, 'f', 3, 64))
				fg := fig{iops: ptr(d.IOPS), p50: ptr(l.P50Millis), p99: ptr(l.P99Millis), p999: ptr(l.P999Millis)}
				if c, ok := configuredP99(m.latency, d.Direction); ok {
					part += fmt.Sprintf(" (configured %s ms)", strconv.FormatFloat(c, 'f', 3, 64))
					fg.configured = ptr(c)
				}
				parts = append(parts, part)
				figs[m.target][cat] = fg
			}
		}
		if len(parts) == 0 {
			continue
		}
		sec.Findings = append(sec.Findings, "Storage (fio): "+m.target+": "+strings.Join(parts, "; ")+".")
		clauses[m.target] = "fio " + parts[0]
	}
	sec.Answers = answersOf(rc, clauses)
	if len(cats) == 0 {
		return
	}
	iops := report.BarChart{Title: "fio IOPS per profile and tier", YLabel: "IOPS", Categories: cats,
		Note: "fio's IOPS in each profile and direction, one bar per target (tier)."}
	for _, m := range ms {
		s := report.BarSeries{Label: m.target, Values: make([]*float64, len(cats))}
		for ci, c := range cats {
			s.Values[ci] = figs[m.target][c].iops
		}
		iops.Series = append(iops.Series, s)
	}
	sec.Bars = append(sec.Bars, iops)
	// Latency percentiles: one group per tier and profile direction.
	lat := report.BarChart{Title: "fio completion latency percentiles per tier (ms)", YLabel: "ms",
		Note: "fio's completion latency p50, p99 and p99.9 in each profile and direction, per target (tier)."}
	anyConfigured := false
	for _, m := range ms {
		for _, c := range cats {
			if _, ok := figs[m.target][c]; ok {
				lat.Categories = append(lat.Categories, m.target+": "+c)
				anyConfigured = anyConfigured || figs[m.target][c].configured != nil
			}
		}
	}
	series := []struct {
		label string
		of    func(fig) *float64
	}{{"p50", func(f fig) *float64 { return f.p50 }}, {"p99", func(f fig) *float64 { return f.p99 }}, {"p99.9", func(f fig) *float64 { return f.p999 }}}
	if anyConfigured {
		series = append(series, struct {
			label string
			of    func(fig) *float64
		}{"configured p99", func(f fig) *float64 { return f.configured }})
		lat.Note += " Configured p99: the p99 delay the target's latency layer was set to for that direction (its jitter left out); " +
			"a tier's measured p99 at or above it shows the layer held; n/a: no layer."
	}
	for _, s := range series {
		bs := report.BarSeries{Label: s.label}
		for _, m := range ms {
			for _, c := range cats {
				if f, ok := figs[m.target][c]; ok {
					bs.Values = append(bs.Values, s.of(f))
				}
			}
		}
		lat.Series = append(lat.Series, bs)
	}
	sec.Bars = append(sec.Bars, lat)
}

// configuredP99 is the p99 delay in ms a latency layer adds to the I/O of
// fio's direction ("read", "write"): a fixed delay itself, a
// distribution's p99, a tail of 1% or more its tail's delay.
func configuredP99(l *latency.Settings, direction string) (float64, bool) {
	if l == nil || l.On == latency.WALDir { // fio's file is in the data directory
		return 0, false
	}
	k := latency.Read
	if direction == "write" {
		k = latency.Write
	}
	d := l.Delay(k)
	if d.IsZero() {
		return 0, false
	}
	p99 := d.Center
	if d.Shape == latency.Normal || d.Shape == latency.LogNormal {
		p99 = d.P99
	}
	if d.TailPct >= 1 {
		p99 = max(p99, d.Tail)
	}
	return float64(p99) / float64(time.Millisecond), true
}
