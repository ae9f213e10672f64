package sqlserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestTSQL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT w_tax FROM warehouse WHERE w_id = ?", "SELECT w_tax FROM warehouse WHERE w_id = @p1"},
		{"UPDATE t SET a = ?, b = '?' WHERE c = ?", "UPDATE t SET a = @p1, b = '?' WHERE c = @p2"},
		{"SELECT o_id FROM orders WHERE o_w_id = ? ORDER BY o_id DESC LIMIT 1",
			"SELECT TOP (1) o_id FROM orders WHERE o_w_id = @p1 ORDER BY o_id DESC"},
		{"select c_last from customer group by c_last order by count(*) limit 3",
			"SELECT TOP (3) c_last from customer group by c_last order by count(*)"},
		// Not a SELECT, or not a LIMIT it can move: left alone.
		{"DELETE FROM t WHERE a = 1 LIMIT 1", "DELETE FROM t WHERE a = 1 LIMIT 1"},
		{"SELECT DISTINCT a FROM t LIMIT 1", "SELECT DISTINCT a FROM t LIMIT 1"},
	}
	for _, tc := range tests {
		if got := tsql(tc.in); got != tc.want {
			t.Errorf("tsql(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLockByUpdate(t *testing.T) {
	got := lockByUpdate("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = @p1 AND d_id = @p2", "d_next_o_id")
	want := "UPDATE district SET d_next_o_id = d_next_o_id WHERE d_w_id = @p1 AND d_id = @p2; " +
		"SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = @p1 AND d_id = @p2"
	if got != want {
		t.Errorf("lockByUpdate = %q, want %q", got, want)
	}
	got = lockByUpdate("SELECT s_w_id FROM stock WHERE (s_w_id = @p1 AND s_i_id = @p2) ORDER BY s_w_id, s_i_id", "s_quantity")
	if !strings.HasPrefix(got, "UPDATE stock SET s_quantity = s_quantity WHERE (s_w_id = @p1 AND s_i_id = @p2); SELECT") {
		t.Errorf("lockByUpdate kept the ORDER BY in the update or lost the condition: %q", got)
	}
}

// TestStatements: the client-side statements hold no construct T-SQL
// lacks, and every read that precedes an update of its rows locks them
// by updating first.
func TestStatements(t *testing.T) {
	for _, q := range statements.All() {
		for _, bad := range []string{"?", " LIMIT ", "FOR UPDATE", "UPDLOCK", "HOLDLOCK"} {
			if strings.Contains(q, bad) {
				t.Errorf("statement holds %q: %s", bad, q)
			}
		}
	}
	locked := append([]string{statements.NewOrderDistrict, statements.PaymentCustomer}, statements.NewOrderStocks[:]...)
	for _, q := range locked {
		if !strings.HasPrefix(q, "UPDATE ") || !strings.Contains(q, "; SELECT ") {
			t.Errorf("read of rows it then changes does not lock them by updating first: %s", q)
		}
	}
}

func TestProcedureBatches(t *testing.T) {
	batches := procedureBatches(proceduresSQL)
	if len(batches) != len(procedureNames) {
		t.Fatalf("%d batches in procedures.sql, want %d", len(batches), len(procedureNames))
	}
	for i, b := range batches {
		if !strings.HasPrefix(b, "CREATE PROCEDURE "+procedureNames[i]+"\n") {
			t.Errorf("batch %d starts %q, want CREATE PROCEDURE %s", i, b[:min(len(b), 60)], procedureNames[i])
		}
		// Nothing SQL Server 2008 or Babelfish cannot run.
		for _, bad := range []string{"THROW", "OFFSET", "FETCH", "CONCAT(", "IIF(", "MERGE", "PERCENT", "OUTPUT INTO",
			"IF EXISTS", "UPDLOCK", "HOLDLOCK"} {
			if strings.Contains(strings.ToUpper(b), bad) {
				t.Errorf("procedure %s uses %s", procedureNames[i], bad)
			}
		}
	}
}

func TestBulkValues(t *testing.T) {
	got := bulkValues([]any{int64(7), 12.34, 0.1234, -10.0, "x", nil})
	want := []any{int64(7), "12.3400", "0.1234", "-10.0000", "x", nil}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bulkValues[%d] = %#v, want %#v", i, got[i], want[i])
		}
	}
}

func TestStockOrder(t *testing.T) {
	lines := []tpcc.OrderLineInput{{IID: 9, SupplyWID: 1}, {IID: 3, SupplyWID: 2}, {IID: 9, SupplyWID: 1}, {IID: 2, SupplyWID: 1}, {IID: 5, SupplyWID: 1}}
	got := stockOrder(nil, lines)
	want := []int{3, 4, 0, 2, 1} // (1,2) (1,5) (1,9) (1,9) (2,3): a row's lines in line order
	if !slices.Equal(got, want) {
		t.Errorf("stockOrder = %v, want %v", got, want)
	}
}

func TestRenumber(t *testing.T) {
	tests := []struct {
		q      string
		offset int
		want   string
	}{
		{"SELECT a FROM t WHERE b = @p1 AND c = @p2", 0, "SELECT a FROM t WHERE b = @p1 AND c = @p2"},
		{"SELECT a FROM t WHERE b = @p1 AND c = @p12", 9, "SELECT a FROM t WHERE b = @p10 AND c = @p21"},
		{"SELECT @@ROWCOUNT, @pool FROM t WHERE x = @p3", 2, "SELECT @@ROWCOUNT, @pool FROM t WHERE x = @p5"},
	}
	for _, tc := range tests {
		if got := string(renumber(nil, tc.q, tc.offset)); got != tc.want {
			t.Errorf("renumber(%q, %d) = %q, want %q", tc.q, tc.offset, got, tc.want)
		}
	}
}
