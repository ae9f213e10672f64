package mysql

import (
	"context"
	"testing"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// newVU is a virtual user of terminal number terminal on s.
func newVU(d *DB, s dialect.Session, warehouses, terminal int) *conformance.VU {
	r := tpcc.NewRand(7, tpcc.TerminalStream(terminal))
	run := tpcc.NewRunConstants(r, testLoad)
	return conformance.NewVU(d, s, tpcc.NewTerminal(r, run, warehouses, 1+terminal%warehouses, 1+terminal%10))
}

// TestConsistencyAfterRun runs a batch of the standard mix in both styles
// and checks the consistency conditions of TPC-C 3.3.2 afterwards.
func TestConsistencyAfterRun(t *testing.T) {
	d := buildTest(t, 1)
	ctx := context.Background()
	newOrders := queryInt(t, d, "SELECT SUM(d_next_o_id - 1) FROM district")
	for i, style := range styles {
		t.Run(style.String(), func(t *testing.T) {
			s := newSession(t, d, style)
			vu := newVU(d, s, 1, i)
			for n := 0; n < 300; n++ {
				if err := vu.Next(ctx, -1); err != nil {
					t.Fatalf("transaction %d: %v", n, err)
				}
			}
		})
	}
	if got := queryInt(t, d, "SELECT SUM(d_next_o_id - 1) FROM district"); got <= newOrders+200 {
		t.Errorf("committed New-Orders: got %d, want more than %d (45%% of 600 transactions)", got-newOrders, 200)
	}
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		results, err := tpcc.CheckAll(ctx, q, d.Caps().MoneyTolerance, false)
		if err != nil {
			return err
		}
		for _, r := range results {
			if !r.Passed && !r.Skipped {
				t.Errorf("consistency %s (%s) after the run: %d violations, %s", r.Clause, r.Name, r.Violations, r.Detail)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
}
