package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpchload"
)

func init() {
	plan.Register(plan.Kind{Name: "check", Scope: plan.PerTarget, NoWarehouses: true,
		Summary: "prove the target's database consistent, as `oltplab check` (the TPC-C conditions of clause 3.3.2) and `oltplab tpch check` (TPC-H's rows and relationships) for each schema it holds; a failed condition fails the step",
		New:     func() plan.Step { return &checkStep{} }})
}

var (
	_ Step                = (*checkStep)(nil)
	_ Reporter            = (*checkStep)(nil)
	_ plan.ConnectionUser = (*checkStep)(nil)
)

// ErrCheckFailed: a check step found a condition that does not hold.
// The check is stored all the same; the step, and so the experiment,
// fail.
var ErrCheckFailed = errors.New("consistency check failed")

// checkStep checks one target's database: the TPC-C consistency
// conditions (scenario.Env.Check) when it holds oltplab's TPC-C schema,
// the TPC-H check (scenario.Env.TPCHCheck) when it holds TPC-H's, each
// stored as a run of its own. It has no options.
//
//	steps: [build, profile, check]
type checkStep struct{}

func (*checkStep) Prepare(*plan.Plan) error { return nil }

func (*checkStep) Describe() string {
	return "check the database: TPC-C conditions (3.3.2) and TPC-H relationships, for each schema present"
}

func (*checkStep) Connections(*plan.Plan) int { return 2 }

// checkSecondsPerWarehouse is a check of one warehouse on the 2-core test
// machine, rounded up (`oltplab check` took 2–4 s on 2 warehouses).
const checkSecondsPerWarehouse = 3

func (*checkStep) Estimate(p *plan.Plan, _ *plan.TargetSpec) time.Duration {
	return time.Duration(max(10, checkSecondsPerWarehouse*p.Warehouses)) * time.Second
}

func (*checkStep) Run(ctx context.Context, x *Exec) (Outcome, error) {
	if err := supersedeEarlier(ctx, x, "the check step started over"); err != nil {
		return Outcome{}, err
	}
	var (
		oc        Outcome
		headlines []string
		failed    []string
		checked   bool
	)
	db, tg := x.Target.DB, x.Target.Target
	// TPC-C, when the target holds oltplab's schema.
	switch _, err := scenario.ReadSchema(ctx, db, tg); {
	case err == nil:
		checked = true
		out, err := x.Env.Check(ctx, db, tg)
		oc.RunIDs = append(oc.RunIDs, nonZero(out.RunID)...)
		if err != nil {
			return oc, err
		}
		headlines = append(headlines, "TPC-C "+checkHeadline(out.Check))
		for _, c := range out.Conditions {
			if !c.Passed && !c.Skipped {
				failed = append(failed, fmt.Sprintf("TPC-C %s %s (%d violation(s), first: %s)", c.Clause, c.Name, c.Violations, c.Detail))
			}
		}
	case !errors.Is(err, scenario.ErrNoSchema):
		return oc, err
	}
	// TPC-H, when the target holds its schema.
	switch _, err := tpchload.ReadMeta(ctx, db); {
	case err == nil:
		checked = true
		out, err := x.Env.TPCHCheck(ctx, db, tg)
		oc.RunIDs = append(oc.RunIDs, nonZero(out.RunID)...)
		if err != nil {
			return oc, err
		}
		headlines = append(headlines, "TPC-H "+tpchCheckHeadline(out.TPCHCheck))
		for _, c := range out.Checks {
			if !c.Passed && !c.Skipped {
				failed = append(failed, fmt.Sprintf("TPC-H %s %s (%d, want %d: %s)", c.Clause, c.Name, c.Got, c.Want, c.Detail))
			}
		}
	case !errors.Is(err, tpchload.ErrNoSchema):
		return oc, err
	}
	if !checked {
		return oc, fmt.Errorf("%w in %s, nor TPC-H's: a check step follows a build or tpch step", scenario.ErrNoSchema, tg)
	}
	oc.Headline = strings.Join(headlines, "; ")
	if len(failed) > 0 {
		return oc, fmt.Errorf("%w: %s", ErrCheckFailed, strings.Join(failed, "; "))
	}
	return oc, nil
}

// checkHeadline counts the TPC-C conditions: "12 conditions pass (1
// skipped: only right after the build)" or the failures.
func checkHeadline(c summary.Check) string {
	var pass, skipped, fail int
	for _, r := range c.Conditions {
		switch {
		case r.Skipped:
			skipped++
		case r.Passed:
			pass++
		default:
			fail++
		}
	}
	s := fmt.Sprintf("%d of %d conditions pass", pass, pass+fail)
	if fail > 0 {
		s = fmt.Sprintf("%d of %d conditions FAIL", fail, pass+fail)
	}
	if skipped > 0 {
		s += fmt.Sprintf(" (%d skipped: they hold only right after the build)", skipped)
	}
	return s
}

func tpchCheckHeadline(c summary.TPCHCheck) string {
	var pass, fail int
	for _, r := range c.Checks {
		switch {
		case r.Skipped:
		case r.Passed:
			pass++
		default:
			fail++
		}
	}
	if fail > 0 {
		return fmt.Sprintf("%d of %d checks FAIL", fail, pass+fail)
	}
	return fmt.Sprintf("%d of %d checks pass", pass, pass+fail)
}

// Section is the check step's part of the report: each target's
// verdict per schema, and every condition that failed.
func (*checkStep) Section(ctx context.Context, rc *ReportContext, index int) (report.Section, error) {
	t := report.Table{Title: "Consistency checks",
		Note:   "TPC-C: the consistency conditions of clause 3.3.2; TPC-H: each table's rows and every foreign key's (clauses 4.2.5, 1.4.2.3, 4.2.3). A failed condition fails the step.",
		Header: []string{"Target", "Workload", "Verdict", "Failed"}}
	for _, u := range rc.inOrder(rc.Units(index)) {
		rows := 0
		c, err := lastSummary(rc, u.Seq, store.KindCheck, "check", summary.DecodeCheck)
		if err != nil {
			return report.Section{}, err
		}
		if c != nil {
			var bad []string
			for _, r := range c.Conditions {
				if !r.Passed && !r.Skipped {
					bad = append(bad, fmt.Sprintf("%s %s: %d violation(s), first: %s", r.Clause, r.Name, r.Violations, r.Detail))
				}
			}
			t.Rows = append(t.Rows, []string{u.Target, "TPC-C", checkHeadline(*c), orDash(strings.Join(bad, "; "))})
			rows++
		}
		h, err := lastSummary(rc, u.Seq, store.KindTPCHCheck, "TPC-H check", summary.DecodeTPCHCheck)
		if err != nil {
			return report.Section{}, err
		}
		if h != nil {
			var bad []string
			for _, r := range h.Checks {
				if !r.Passed && !r.Skipped {
					bad = append(bad, fmt.Sprintf("%s %s: %d, want %d", r.Clause, r.Name, r.Got, r.Want))
				}
			}
			t.Rows = append(t.Rows, []string{u.Target, "TPC-H", tpchCheckHeadline(*h), orDash(strings.Join(bad, "; "))})
			rows++
		}
		if rows == 0 {
			t.Rows = append(t.Rows, []string{u.Target, "—", "not checked (" + string(u.State) + ")", "—"})
		}
	}
	return report.Section{Tables: []report.Table{t}}, nil
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
