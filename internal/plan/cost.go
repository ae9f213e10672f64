package plan

import (
	"errors"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/yamldoc"
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
func (c *CostSpec) check(d *yamldoc.Decoder, n *yaml.Node) error {
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
func (p *Plan) checkCost(d *yamldoc.Decoder) error {
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
