package postgres

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// testWarehouses is the scale of the database the functional tests build:
// two warehouses, so that remote order lines and remote payments exist.
const testWarehouses = 2

// TestBuiltDatabase builds one database and runs, in order, the checks of
// the build and then the transactions of both styles against it.
func TestBuiltDatabase(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	emitted, err := build(ctx, d, testWarehouses, 2)
	if err != nil {
		t.Fatalf("build %d warehouses: %v", testWarehouses, err)
	}
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()

	t.Run("row counts", func(t *testing.T) { testRowCounts(t, c, emitted) })
	t.Run("tables and keys", func(t *testing.T) { testTablesAndKeys(t, d, c) })
	t.Run("consistency after build", func(t *testing.T) { testConsistency(t, d, true) })
	for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		t.Run(style.String(), func(t *testing.T) { testTransactions(t, d, c, style) })
	}
	for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		t.Run("new-order names a stock row twice/"+style.String(), func(t *testing.T) { testNewOrderRepeatedStock(t, d, c, style) })
	}
	t.Run("stock quantity line after line", func(t *testing.T) { testStockQuantity(t, c) })
	t.Run("mix batch", func(t *testing.T) { testMixBatch(t, d) })
	t.Run("consistency after transactions", func(t *testing.T) { testConsistency(t, d, false) })
	t.Run("tx counter", func(t *testing.T) { testTxCount(t, d) })
	for _, style := range []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL} {
		t.Run("delivery skips an empty district/"+style.String(), func(t *testing.T) { testDeliverySkips(t, d, c, style) })
	}
	t.Run("drop schema", func(t *testing.T) { testDropSchema(t, d) })
}

// testMixBatch runs the transaction mix from four sessions at once, two of
// each style, on both warehouses.
func testMixBatch(t *testing.T, d *Database) {
	ctx := context.Background()
	const sessions, perSession = 4, 150
	g, gctx := errgroup.WithContext(ctx)
	for i := range sessions {
		style := dialect.StyleProcedures
		if i%2 == 1 {
			style = dialect.StyleClientSQL
		}
		s, err := d.NewSession(ctx, style)
		if err != nil {
			t.Fatalf("NewSession: %v", err)
		}
		defer s.Close()
		r := tpcc.NewRand(testSeed, tpcc.TerminalStream(i))
		vu := conformance.NewVU(d, s, tpcc.NewTerminal(r, tpcc.NewRunConstants(r, testLoad), testWarehouses, i%testWarehouses+1, i+1))
		g.Go(func() error {
			for range perSession {
				if err := vu.Next(gctx, -1); err != nil {
					return fmt.Errorf("%v session: %w", style, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("mix: %v", err)
	}
}

func testRowCounts(t *testing.T, c tpcc.Querier, emitted buildCounts) {
	ctx := context.Background()
	var olWant int64
	if err := c.QueryRow(ctx, "SELECT sum(o_ol_cnt) FROM orders").Scan(&olWant); err != nil {
		t.Fatalf("sum o_ol_cnt: %v", err)
	}
	for _, tb := range tpcc.Tables {
		want := int64(tpcc.RowsPerWarehouse(tb)) * testWarehouses
		switch tb {
		case tpcc.Item:
			want = tpcc.ItemCount
		case tpcc.OrderLine:
			want = olWant // TPC-C 4.3.3.1: O_OL_CNT lines per order
		}
		var got int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tb.String()).Scan(&got); err != nil {
			t.Fatalf("count %s: %v", tb, err)
		}
		if got != want {
			t.Errorf("%s has %d rows, want %d", tb, got, want)
		}
		if got != emitted[tb] {
			t.Errorf("%s has %d rows, the generator emitted %d", tb, got, emitted[tb])
		}
	}
}

func testTablesAndKeys(t *testing.T, d *Database, c tpcc.Querier) {
	ctx := context.Background()
	for _, name := range append(tableNames(), tpcc.MetaTable, "no_such_table") {
		got, err := d.HasTable(ctx, name)
		if err != nil {
			t.Fatalf("HasTable(%q): %v", name, err)
		}
		if want := name != "no_such_table"; got != want {
			t.Errorf("HasTable(%q) = %v, want %v", name, got, want)
		}
	}
	for _, pk := range primaryKeys {
		var cols string
		err := c.QueryRow(ctx, "SELECT string_agg(a.attname, ', ' ORDER BY k.ord) "+
			"FROM pg_constraint x CROSS JOIN LATERAL unnest(x.conkey) WITH ORDINALITY AS k(attnum, ord) "+
			"JOIN pg_attribute a ON a.attrelid = x.conrelid AND a.attnum = k.attnum "+
			"WHERE x.conrelid = ?::regclass AND x.contype = 'p'", pk.table.String()).Scan(&cols)
		if err != nil {
			t.Fatalf("primary key of %s: %v", pk.table, err)
		}
		if cols != pk.cols {
			t.Errorf("primary key of %s is (%s), want (%s)", pk.table, cols, pk.cols)
		}
	}
	for _, ix := range secondaryIndexes {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE tablename = ? AND indexname = ?",
			ix.table.String(), ix.name).Scan(&n); err != nil {
			t.Fatalf("look for index %s: %v", ix.name, err)
		}
		if n != 1 {
			t.Errorf("index %s on %s is missing", ix.name, ix.table)
		}
	}
	// Autovacuum is back on after the build (CreateTables turned it off);
	// the updated tables keep their fill factor.
	for _, tb := range tpcc.Tables {
		var opts string
		if err := c.QueryRow(ctx, "SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = ?::regclass",
			tb.String()).Scan(&opts); err != nil {
			t.Fatalf("storage options of %s: %v", tb, err)
		}
		want := ""
		if ff, ok := fillFactors[tb]; ok {
			want = fmt.Sprintf("fillfactor=%d", ff)
		}
		if opts != want {
			t.Errorf("storage options of %s after Analyze: %q, want %q", tb, opts, want)
		}
	}
	// The columns are in tpcc order.
	for _, tb := range tpcc.Tables {
		rows, err := c.Query(ctx, "SELECT attname FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 "+
			"AND NOT attisdropped ORDER BY attnum", tb.String())
		if err != nil {
			t.Fatalf("columns of %s: %v", tb, err)
		}
		var got []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatalf("scan column of %s: %v", tb, err)
			}
			got = append(got, s)
		}
		rows.Close()
		if want := tb.Columns(); !equalStrings(got, want) {
			t.Errorf("columns of %s = %v, want %v", tb, got, want)
		}
	}
}

func tableNames() []string {
	var s []string
	for _, tb := range tpcc.Tables {
		s = append(s, tb.String())
	}
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testConsistency(t *testing.T, d *Database, afterBuild bool) {
	ctx := context.Background()
	var results []tpcc.CheckResult
	err := d.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		results, err = tpcc.CheckAll(ctx, q, d.Caps().MoneyTolerance, afterBuild)
		return err
	})
	if err != nil {
		t.Fatalf("CheckAll: %v", err)
	}
	if got, want := len(results), len(tpcc.Conditions); got != want {
		t.Fatalf("CheckAll returned %d results, want %d", got, want)
	}
	for _, r := range results {
		if afterBuild && r.Skipped {
			t.Errorf("%s %s skipped right after the build: %s", r.Clause, r.Name, r.Detail)
		}
		if !r.Skipped && !r.Passed {
			t.Errorf("%s %s failed: %d violations, first: %s", r.Clause, r.Name, r.Violations, r.Detail)
		}
	}
}

func testDropSchema(t *testing.T, d *Database) {
	ctx := context.Background()
	if err := d.DropSchema(ctx); err != nil {
		t.Fatalf("DropSchema: %v", err)
	}
	for _, name := range append(tableNames(), tpcc.MetaTable) {
		if ok, err := d.HasTable(ctx, name); err != nil || ok {
			t.Errorf("after DropSchema HasTable(%q) = %v, %v; want false, nil", name, ok, err)
		}
	}
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'oltplab\\_%'").Scan(&n); err != nil {
		t.Fatalf("count procedures: %v", err)
	}
	if n != 0 {
		t.Errorf("%d oltplab_ functions remain after DropSchema", n)
	}
	// Dropping twice is fine.
	if err := d.DropSchema(ctx); err != nil {
		t.Errorf("second DropSchema: %v", err)
	}
}
