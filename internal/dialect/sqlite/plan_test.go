package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestPlanFixes: the rewritten statements still apply to the shared text,
// and SQLite runs them on the intended access path.
func TestPlanFixes(t *testing.T) {
	testenv.Require(t, testenv.Long)
	d := openBuilt(t)
	ctx := context.Background()
	orig := tpcc.NewStatements(tpcc.SQLOptions{})
	tests := []struct {
		name      string
		text      string
		orig      string
		wantPlan  []string // substrings of the plan's lines, in order
		forbidden string
	}{
		{"order-status last order", statements.OrderStatusLastOrder, orig.OrderStatusLastOrder,
			[]string{"SEARCH orders USING INDEX orders_customer (o_w_id=? AND o_d_id=? AND o_c_id=?)"}, ""},
		{"stock-level", statements.StockLevelLowStock, orig.StockLevelLowStock,
			[]string{"SEARCH order_line USING PRIMARY KEY", "SEARCH stock USING PRIMARY KEY (s_w_id=? AND s_i_id=?)"}, "SEARCH stock USING PRIMARY KEY (s_w_id=?)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.text == tt.orig {
				t.Fatalf("plan fix did not apply to the shared statement %q", tt.orig)
			}
			rows, err := d.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+tt.text, make([]any, strings.Count(tt.text, "?"))...)
			if err != nil {
				t.Fatal(err)
			}
			var plan strings.Builder
			for rows.Next() {
				var id, parent, unused int64
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan.WriteString(detail + "\n")
			}
			rows.Close()
			got := plan.String()
			rest := got
			for _, w := range tt.wantPlan {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("plan:\n%s\nwant, in order: %q", got, tt.wantPlan)
				}
				rest = rest[i+len(w):]
			}
			if tt.forbidden != "" && strings.Contains(got, tt.forbidden) {
				t.Errorf("plan:\n%s\nmust not contain %q", got, tt.forbidden)
			}
		})
	}
}
