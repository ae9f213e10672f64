package experiment

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
)

// CostSpec is a plan's `cost` section: what the report's cost table is
// asked for beyond the targets' prices. The baseline of the savings is
// the plan's baseline.
//
//	cost:
//	  objective_p90_ms: 50   # also price the best step whose New-Order p90 is at most 50 ms
//	  target_nopm: 20000     # and the cores 20,000 NOPM would need at each target's NOPM per core
type CostSpec struct {
	ObjectiveP90Millis float64 `yaml:"objective_p90_ms" json:"objective_p90_ms,omitempty"`
	TargetNOPM         float64 `yaml:"target_nopm" json:"target_nopm,omitempty"`
}

// check validates the section, placing errors at its fields' lines.
func (c *CostSpec) check(d *Decoder, n *yaml.Node) error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"objective_p90_ms", c.ObjectiveP90Millis}, {"target_nopm", c.TargetNOPM}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return d.Errorf(orRoot(valueNode(n, f.key), n), "cost."+f.key, "must be 0 (none) or a positive number, not %v", f.v)
		}
	}
	return nil
}

// checkCost refuses priced targets that cannot share one cost table
// (currencies or periods that differ), at the second target's line.
func (p *Plan) checkCost(d *Decoder) error {
	var targets []cost.Target
	for _, t := range p.Targets {
		if t.Prices != nil {
			// Cores unknown before the run (the recorded host's) do not
			// matter to whether the targets share a currency and a period.
			targets = append(targets, cost.Target{Name: t.Name, Prices: *t.Prices, Cores: max(t.cores(), 1)})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	_, err := cost.Compute(targets, cost.Options{})
	var ce *cost.Error
	if errors.As(err, &ce) && len(ce.Path) > 0 {
		t := p.Target(ce.Path[0])
		if t != nil {
			return d.Errorf(&yaml.Node{Line: t.Line}, t.Path+".prices."+strings.Join(ce.Path[1:], "."), "%s", ce.Msg)
		}
	}
	if err != nil {
		return d.Errorf(nil, "prices", "%v", err)
	}
	return nil
}

// cores is the number of CPUs a managed instance is confined to; 0 when
// it is not confined (or is no managed instance).
func (t *TargetSpec) cores() int {
	if !t.Managed() || t.Instance.CPUs == "" {
		return 0
	}
	set, err := instance.ParseCPUList(t.Instance.CPUs)
	if err != nil {
		return 0
	}
	return len(set)
}

// costTable prices every target that has prices with what the plan's last
// measured profile step found on it: its mean NOPM and TPM per step and
// the New-Order p90 of the step's merged histograms. A target's cores
// are its prices' cores, else the CPUs its managed instance was confined
// to, else the recorded host's when the database ran there. It returns
// nil when no target has prices.
func (rc *ReportContext) costTable(profiles map[string]report.Profile, step string) *report.CostSection {
	p := rc.Params
	var targets []cost.Target
	var unpriced []string
	for _, name := range rc.Order {
		t, _ := rc.Target(name)
		if t.Prices == nil {
			unpriced = append(unpriced, name)
			continue
		}
		ct := cost.Target{Name: name, Prices: *t.Prices}
		if t.Instance != nil && t.Instance.CPUs != "" {
			if set, err := instance.ParseCPUList(t.Instance.CPUs); err == nil {
				ct.Cores = len(set)
				ct.CoresSource = fmt.Sprintf("the CPUs the managed instance was confined to (cpus: %s)", t.Instance.CPUs)
			}
		}
		rp, measured := profiles[name]
		if ct.Cores == 0 && measured {
			ct.Cores, ct.CoresSource = results.RecordedCores(rp)
		}
		for _, s := range rp.Steps {
			if s.NOPM.N == 0 {
				continue // no complete repeat
			}
			ct.Steps = append(ct.Steps, cost.Step{VUs: s.VUs, NOPM: s.NOPM.Mean, TPM: s.TPM.Mean,
				NewOrderP90Millis: s.Latency["new_order"].P90Millis})
		}
		targets = append(targets, ct)
	}
	if len(targets) == 0 {
		return nil
	}
	o := cost.Options{}
	if p.Cost != nil {
		o.ObjectiveP90Millis, o.TargetNOPM = p.Cost.ObjectiveP90Millis, p.Cost.TargetNOPM
	}
	baseline := ""
	for _, t := range targets {
		if t.Name == p.Baseline {
			baseline = t.Name
		}
	}
	o.Baseline = baseline
	tab, err := cost.Compute(targets, o)
	if err != nil {
		// The plan was checked when it ran, but what only the run tells
		// (a remote database's cores) may be missing: the report says so
		// instead of failing.
		return &report.CostSection{Step: step, Unpriced: unpriced, Note: "No cost table: " + err.Error() + "."}
	}
	for i, r := range tab.Rows {
		if _, ok := profiles[r.Target]; !ok {
			tab.Rows[i].PeakNote = "no measured profile"
		}
	}
	sec := &report.CostSection{Table: tab, Step: step, Unpriced: unpriced}
	if baseline == "" && len(targets) > 1 {
		sec.Note = fmt.Sprintf("The baseline %s has no prices: no savings are shown.", p.Baseline)
	}
	return sec
}
