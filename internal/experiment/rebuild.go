package experiment

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

func init() {
	plan.Register(plan.Kind{Name: "rebuild", Scope: plan.PerTarget,
		Summary: "rebuild the largest index of ORDER-LINE after a cold restart and again warm, as `oltplab rebuild`: elapsed vs server CPU time (options: all_indexes, cold, repeat)",
		New:     func() plan.Step { return &rebuildStep{Cold: true, Repeat: 1} }})
}

// What the rebuild kind is, checked by the compiler.
var (
	_ Step                = (*rebuildStep)(nil)
	_ Reporter            = (*rebuildStep)(nil)
	_ plan.ConnectionUser = (*rebuildStep)(nil)
)

var (
	_ Step                = (*rebuildStep)(nil)
	_ Reporter            = (*rebuildStep)(nil)
	_ plan.ConnectionUser = (*rebuildStep)(nil)
)

// rebuildStep is `oltplab rebuild` on one target (scenario.Env.Rebuild):
// on a managed instance each repeat restarts it with a cold cache,
// rebuilds, and rebuilds again warm; on a URL target it rebuilds warm
// only, and the result says so.
//
//	rebuild:
//	  all_indexes: false   # every index of ORDER-LINE instead of the largest
//	  cold: true           # a rebuild after a cold restart before each warm one
//	  repeat: 2            # cold and warm pairs
type rebuildStep struct {
	AllIndexes bool `yaml:"all_indexes"`
	Cold       bool `yaml:"cold"`
	Repeat     int  `yaml:"repeat"`

	experiment string
	warehouses int
}

func (s *rebuildStep) Prepare(p *plan.Plan) error {
	if s.Repeat < 1 {
		return fmt.Errorf("repeat must be at least 1, got %d", s.Repeat)
	}
	s.experiment, s.warehouses = p.Name, p.Warehouses
	return nil
}

func (s *rebuildStep) Describe() string {
	what := "the largest index of order_line"
	if s.AllIndexes {
		what = "every index of order_line"
	}
	how := "warm"
	if s.Cold {
		how = "cold (managed instances) then warm"
	}
	d := fmt.Sprintf("rebuild %s, %s", what, how)
	if s.Repeat > 1 {
		d += fmt.Sprintf(" × %d", s.Repeat)
	}
	return d
}

func (s *rebuildStep) Connections(*plan.Plan) int { return 2 }

// rebuildSecondsPerWarehouse is what one rebuild of ORDER-LINE's primary
// key took per warehouse on the 2-core test VM under load (PostgreSQL
// 1.5-2.6 s, MariaDB 2-4 s at 10 warehouses, capped or not), rounded up;
// restartSeconds a cold restart.
const (
	rebuildSecondsPerWarehouse = 4
	restartSeconds             = 10
)

func (s *rebuildStep) Estimate(p *plan.Plan, t *plan.TargetSpec) time.Duration {
	per := time.Duration(rebuildSecondsPerWarehouse*s.warehouses) * time.Second
	pair := per
	if s.Cold && t.Managed() {
		pair += per + restartSeconds*time.Second
	}
	return time.Duration(s.Repeat) * pair
}

func (s *rebuildStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	if err := supersedeEarlier(ctx, x, "the rebuild step started over"); err != nil {
		return Outcome{}, err
	}
	o := scenario.RebuildOptions{Label: s.experiment + "/" + x.Target.Spec.Name, AllIndexes: s.AllIndexes, Cold: s.Cold,
		Repeat: s.Repeat, DataDir: x.Target.Spec.LocalDir(), Server: x.Target.Server}
	if rm := x.Target.Remote; rm != nil {
		o.Remote, o.RemoteDataDir = true, x.Target.Spec.Instance.DataDir
		rebuildPlacement(ctx, x.Env, rm)
	}
	out, err := x.Env.Rebuild(ctx, x.Target.DB, x.Target.Target, o)
	if o.Server != nil && o.Cold {
		// The restarts took the target's connections with them.
		if rerr := x.Target.Reopen(context.WithoutCancel(ctx)); rerr != nil && err == nil {
			err = rerr
		}
	}
	oc := Outcome{RunIDs: nonZero(out.RunID)}
	if out.RunID != 0 {
		oc.Headline = out.Rebuild.Headline()
	}
	return oc, err
}

// rebuildPlacement records where a rebuild on a remote target ran: the
// restarts, the page-cache drop and the counters on the database's host
// by its agent, the statement sent from here, whose elapsed time holds
// the round trip measured now.
func rebuildPlacement(ctx context.Context, env *scenario.Env, rm *Remote) {
	h := env.Hosts
	if h == nil {
		return
	}
	fh := *h
	fh.Driver, fh.DriverAgent = "here", ""
	fh.RTTNote = "the restarts, the page-cache drop and the server's counters ran on host " + rm.Host.Name +
		" by its agent; the rebuild's statement was sent from here, its elapsed time holding one round trip"
	if rtt, err := rm.Client.RTT(ctx, 5); err == nil {
		fh.RTTMicros = rtt.Microseconds()
	} else {
		msg := err.Error()
		if env.Scrub != nil {
			msg = env.Scrub(msg)
		}
		fh.RTTNote += " (round trip not measured: " + msg + ")"
	}
	env.Hosts = &fh
}

// supersedeEarlier marks the runs an earlier attempt of this step stored
// as no longer counting: the step measures everything again.
func supersedeEarlier(ctx context.Context, x *Exec, why string) error {
	if x.Attempt <= 1 || x.Env.Experiment == nil {
		return nil
	}
	runs, err := x.Env.Store.ListRuns(ctx, store.RunFilter{ExperimentID: x.Env.Experiment.ID, Counting: true})
	if err != nil {
		return &scenario.StoreError{Op: "read the experiment's runs", Err: err}
	}
	for _, r := range runs {
		if r.ExperimentSeq != x.Env.Experiment.Seq {
			continue
		}
		if err := x.Env.Store.SupersedeRun(ctx, r.ID, why); err != nil {
			return &scenario.StoreError{Op: "mark a run superseded", Err: err}
		}
	}
	return nil
}

// Section is the rebuild step's part of the report: per target and cache
// state, the mean of the rebuilds with their spread, the server's CPU
// time, the time waited and the server's own reads, and the ratio of cold
// to warm.
func (s *rebuildStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "Index rebuilds, cold and warm cache",
		Note: "Per target, the rebuilds of the last complete rebuild step: elapsed time (mean, min-max), the server's CPU time " +
			"and their difference, the time the rebuild waited (for I/O, locks, and on a busy host for a CPU); the server's own " +
			"reads as its I/O cgroup counted them. Cold: right after a restart that emptied the buffer pool and the OS page cache. " +
			"I/O caps are the target's cgroup throttle (one far above what the device does caps nothing: it only has the server's I/O counted).",
		Header: []string{"Target", "I/O caps", "Rebuilt", "Size MiB", "Cache", "Rebuilds", "Elapsed s", "Min-max s", "Server CPU s", "Waited s", "Waited %", "Read MB", "Cold/warm"},
		Right:  []bool{false, true, false, true, false, true, true, true, true, true, true, true, true}}
	var notes []string
	var measured []rebuildOf
	for _, u := range rc.inOrder(rc.Units(index)) {
		sum, err := lastSummary(rc, u.Seq, store.KindRebuild, "rebuild", summary.DecodeRebuild)
		if err != nil {
			return report.Section{}, err
		}
		if sum == nil {
			t.Rows = append(t.Rows, []string{u.Target, "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", string(u.State)})
			continue
		}
		caps := "—"
		if tp, ok := rc.Target(u.Target); ok && tp.Instance != nil {
			caps = formatCaps(tp.Instance.IOLimit)
		}
		measured = append(measured, rebuildOf{u.Target, *sum})
		what := sum.Index
		if sum.AllIndexes {
			what = "all indexes"
		}
		what += " (" + sum.Rebuild.Rewrites + ")"
		size := "—"
		var bytes int64
		for _, ix := range sum.Indexes {
			if (sum.AllIndexes || ix.Name == sum.Index) && ix.SizeBytes >= 0 {
				bytes += ix.SizeBytes
			}
		}
		if bytes > 0 {
			size = strconv.FormatFloat(float64(bytes)/(1<<20), 'f', 1, 64)
		}
		for _, c := range []struct {
			name string
			sp   *summary.RebuildSpread
		}{{summary.CacheCold, sum.Cold}, {summary.CacheWarm, sum.Warm}} {
			if c.sp == nil {
				continue
			}
			f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
			cpu, wait, waitPct := "—", "—", "—"
			if c.sp.CPU != nil {
				cpu, wait = f(c.sp.CPU.Mean), f(c.sp.Wait.Mean)
				if c.sp.Elapsed.Mean > 0 {
					waitPct = strconv.FormatFloat(100*c.sp.Wait.Mean/c.sp.Elapsed.Mean, 'f', 0, 64)
				}
			}
			read := meanRead(sum.Phases, c.name)
			ratio := ""
			if c.name == summary.CacheCold && sum.Warm != nil && sum.Warm.Elapsed.Mean > 0 {
				ratio = strconv.FormatFloat(c.sp.Elapsed.Mean/sum.Warm.Elapsed.Mean, 'f', 2, 64) + "×"
			}
			t.Rows = append(t.Rows, []string{u.Target, caps, what, size, c.name, strconv.Itoa(c.sp.Elapsed.N), f(c.sp.Elapsed.Mean),
				f(c.sp.Elapsed.Min) + "-" + f(c.sp.Elapsed.Max), cpu, wait, waitPct, read, ratio})
		}
		for _, n := range sum.Notes {
			notes = append(notes, u.Target+": "+n+".")
		}
	}
	sec := report.Section{Tables: []report.Table{t}, Note: strings.Join(notes, " ")}
	rebuildFindings(rc, &sec, measured)
	return sec, nil
}

type rebuildOf struct {
	target string
	sum    summary.Rebuild
}

// rebuildFindings states each target's rebuild time cold and warm, and
// the cold time against the baseline's.
func rebuildFindings(rc *ReportContext, sec *report.Section, ms []rebuildOf) {
	if len(ms) == 0 {
		return
	}
	var base *summary.Rebuild
	if ms[0].target == rc.Order[0] {
		base = &ms[0].sum
	}
	clauses := map[string]string{}
	for i, m := range ms {
		what := m.sum.Index
		if m.sum.AllIndexes {
			what = "all indexes"
		}
		var parts []string
		for _, c := range []struct {
			name string
			sp   *summary.RebuildSpread
		}{{summary.CacheCold, m.sum.Cold}, {summary.CacheWarm, m.sum.Warm}} {
			if c.sp != nil && c.sp.Elapsed.N > 0 {
				parts = append(parts, c.name+" "+secondsWords(c.sp.Elapsed))
			}
		}
		if len(parts) == 0 {
			sec.Findings = append(sec.Findings, fmt.Sprintf("Index rebuild: no rebuild of %s finished on %s.", what, m.target))
			continue
		}
		f := fmt.Sprintf("Index rebuild: %s rebuilds %s in %s", m.target, what, strings.Join(parts, ", "))
		clause := "rebuilds " + what + " in " + strings.Join(parts, ", ")
		if c, w := m.sum.Cold, m.sum.Warm; c != nil && w != nil && w.Elapsed.Mean > 0 {
			f += fmt.Sprintf(" (cold %.2f× warm)", c.Elapsed.Mean/w.Elapsed.Mean)
		}
		// Against the baseline in the same cache state, cold first.
		if i > 0 && base != nil {
			for _, c := range []struct {
				name     string
				mine, of *summary.RebuildSpread
			}{{summary.CacheCold, m.sum.Cold, base.Cold}, {summary.CacheWarm, m.sum.Warm, base.Warm}} {
				if c.mine != nil && c.of != nil && c.mine.Elapsed.N > 0 && c.of.Elapsed.N > 0 {
					f += fmt.Sprintf(", %s %s the time of %s", c.name, ratioWords(profile.Ratio(c.mine.Elapsed, c.of.Elapsed), "rebuilds"), ms[0].target)
					break
				}
			}
		}
		sec.Findings = append(sec.Findings, f+".")
		clauses[m.target] = clause
	}
	sec.Answers = answersOf(rc, clauses)
}

// meanRead is the server's mean read volume in MB over the finished
// phases of one cache state; "—" when it was not counted.
func meanRead(phases []summary.RebuildPhase, cache string) string {
	var total float64
	n := 0
	for _, p := range phases {
		if p.Cache != cache || p.Error != "" || p.ServerIO == nil {
			continue
		}
		total += float64(p.ServerIO.ReadBytes) / 1e6
		n++
	}
	if n == 0 {
		return "—"
	}
	return strconv.FormatFloat(total/float64(n), 'f', 1, 64)
}

// formatCaps prints a throttle as "read 120 IOPS, 8 MB/s; write 120
// IOPS"; "—" for none.
func formatCaps(l instance.IOLimit) string {
	side := func(name string, iops int64, mbps float64) string {
		var parts []string
		if iops > 0 {
			parts = append(parts, strconv.FormatInt(iops, 10)+" IOPS")
		}
		if mbps > 0 {
			parts = append(parts, strconv.FormatFloat(mbps, 'f', -1, 64)+" MB/s")
		}
		if len(parts) == 0 {
			return ""
		}
		return name + " " + strings.Join(parts, ", ")
	}
	var out []string
	for _, s := range []string{side("read", l.ReadIOPS, l.ReadMBps), side("write", l.WriteIOPS, l.WriteMBps)} {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, "; ")
}
