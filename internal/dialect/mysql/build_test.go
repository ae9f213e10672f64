package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// count returns SELECT COUNT(*) of a query's FROM ... part.
func queryInt(t testing.TB, d *DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := d.db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestBuildOneWarehouse(t *testing.T) {
	d := buildTest(t, 1)
	ctx := context.Background()

	// TPC-C 4.3.3.1 cardinalities for W = 1; ORDER_LINE has sum(O_OL_CNT) rows.
	want := map[tpcc.Table]int64{
		tpcc.Item:          100000,
		tpcc.Warehouse:     1,
		tpcc.Stock:         100000,
		tpcc.District:      10,
		tpcc.Customer:      30000,
		tpcc.History:       30000,
		tpcc.Orders:        30000,
		tpcc.NewOrderTable: 9000,
		tpcc.OrderLine:     queryInt(t, d, "SELECT SUM(o_ol_cnt) FROM orders"),
	}
	for _, tb := range tpcc.Tables {
		t.Run(tb.String(), func(t *testing.T) {
			if got := queryInt(t, d, "SELECT COUNT(*) FROM "+tb.String()); got != want[tb] {
				t.Errorf("rows: got %d, want %d", got, want[tb])
			}
		})
	}
	if ol := want[tpcc.OrderLine]; ol < 5*30000 || ol > 15*30000 {
		t.Errorf("order lines: got %d, want within [150000, 450000]", ol)
	}

	for _, tc := range []struct {
		name string
		want bool
	}{{"customer", true}, {tpcc.MetaTable, true}, {"no_such_table", false}} {
		got, err := d.HasTable(ctx, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("HasTable(%q): got %v, %v; want %v, nil", tc.name, got, err, tc.want)
		}
	}

	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer conn.Close()
	results, err := tpcc.CheckAll(ctx, conn, d.Caps().MoneyTolerance, true)
	if err != nil {
		t.Fatalf("CheckAll after build: %v", err)
	}
	for _, r := range results {
		if !r.Passed {
			t.Errorf("consistency %s (%s) after build: %d violations, %s", r.Clause, r.Name, r.Violations, r.Detail)
		}
	}

	// The build-time indexes and keys are there.
	if got := queryInt(t, d, `SELECT COUNT(*) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND index_name IN ('customer_last', 'orders_customer') AND seq_in_index = 1`); got != 2 {
		t.Errorf("secondary indexes: got %d, want 2", got)
	}
	if got := queryInt(t, d, `SELECT COUNT(DISTINCT table_name) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND index_name = 'PRIMARY'`); got != 9 {
		t.Errorf("tables with a primary key: got %d, want 9 (eight TPC-C tables and oltplab_meta)", got)
	}

	// DropSchema removes tables and procedures.
	if err := d.DropSchema(ctx); err != nil {
		t.Fatalf("DropSchema: %v", err)
	}
	if got := queryInt(t, d, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"); got != 0 {
		t.Errorf("tables after DropSchema: got %d, want 0", got)
	}
	if got := queryInt(t, d, "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE()"); got != 0 {
		t.Errorf("procedures after DropSchema: got %d, want 0", got)
	}
}

// TestLoadModesAgree loads the same population through LOAD DATA and
// through multi-row INSERT (the fallback) and compares table checksums.
func TestLoadModesAgree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checksums := map[loadMode]map[string]int64{}
	for _, mode := range []loadMode{loadInfile, loadInsert} {
		d, _ := openTest(t)
		m := mode
		d.forceLoadMode = &m
		if err := d.CreateTables(ctx); err != nil {
			t.Fatalf("CreateTables: %v", err)
		}
		l, err := d.NewLoader(ctx)
		if err != nil {
			t.Fatalf("NewLoader: %v", err)
		}
		if got := l.(*loader).mode; got != mode {
			t.Errorf("loader mode: got %v, want %v", got, mode)
		}
		gen := tpcc.NewGenerator(testSeed, testLoad, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
		emit := func(r tpcc.Row) error { return l.Add(ctx, r) }
		if err := gen.Items(emit); err != nil {
			t.Fatalf("load items (%v): %v", mode, err)
		}
		if err := gen.Warehouse(1, emit); err != nil {
			t.Fatalf("load warehouse (%v): %v", mode, err)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatalf("close loader (%v): %v", mode, err)
		}
		names := make([]string, 0, numTables)
		for _, tb := range tpcc.Tables {
			names = append(names, tb.String())
		}
		rows, err := d.db.QueryContext(ctx, "CHECKSUM TABLE "+strings.Join(names, ", "))
		if err != nil {
			t.Fatalf("CHECKSUM TABLE: %v", err)
		}
		checksums[mode] = map[string]int64{}
		for rows.Next() {
			var name string
			var sum int64
			if err := rows.Scan(&name, &sum); err != nil {
				t.Fatalf("CHECKSUM TABLE: %v", err)
			}
			_, table, _ := strings.Cut(name, ".")
			checksums[mode][table] = sum
		}
		rows.Close()
	}
	for _, tb := range tpcc.Tables {
		got, want := checksums[loadInsert][tb.String()], checksums[loadInfile][tb.String()]
		if got != want || got == 0 {
			t.Errorf("%s checksum: INSERT %d, LOAD DATA %d; want equal and not 0", tb, got, want)
		}
	}
}

func TestAppendInsert(t *testing.T) {
	tests := []struct {
		name string
		tsv  string
		want string
	}{
		{"numbers and null", "1\t2\t\\N\n", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ('1','2',NULL)"},
		{"two rows", "1\t2\t3\n4\t5\t6\n", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ('1','2','3'),('4','5','6')"},
		{"strings and money", "-10.00\tab'c\t2025-01-02 03:04:05\n",
			"INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ('-10.00','ab''c','2025-01-02 03:04:05')"},
		{"leading zeros kept", "0123\t0\t\\N\n", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ('0123','0',NULL)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendInsert(nil, tpcc.NewOrderTable, []byte(tc.tsv))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestProcedureStatements(t *testing.T) {
	stmts := procedureStatements(proceduresSQL)
	var wants []string
	for _, p := range procedureNames {
		wants = append(wants, "CREATE PROCEDURE "+p+"(")
	}
	for _, f := range functionNames {
		wants = append(wants, "CREATE FUNCTION "+f+"(")
	}
	if len(stmts) != len(wants) {
		t.Fatalf("statements: got %d, want %d", len(stmts), len(wants))
	}
	for i, s := range stmts {
		if want := wants[i]; !strings.HasPrefix(s, want) {
			t.Errorf("statement %d: got %.60q, want prefix %q", i, s, want)
		}
		if !strings.HasSuffix(s, "END") {
			t.Errorf("statement %d: got suffix %q, want END", i, s[len(s)-10:])
		}
	}
}

func TestLocalInfileRefusedErrors(t *testing.T) {
	// MariaDB refuses with 1148 (ER_NOT_ALLOWED_COMMAND), MySQL 8 with 3948
	// (ER_CLIENT_LOCAL_FILES_DISABLED); anything else is a real failure.
	for _, tc := range []struct {
		errno uint16
		want  bool
	}{{1148, true}, {3948, true}, {1146, false}, {1045, false}} {
		if got := localInfileRefused[tc.errno]; got != tc.want {
			t.Errorf("localInfileRefused[%d]: got %v, want %v", tc.errno, got, tc.want)
		}
	}
}
