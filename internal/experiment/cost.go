package experiment

import (
	"fmt"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
)

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
