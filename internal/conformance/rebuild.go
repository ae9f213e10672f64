package conformance

import (
	"slices"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// testRebuild lists the indexes of ORDER-LINE, whose largest must be its
// primary key (what `oltplab rebuild` rebuilds, METHODOLOGY experiment 8),
// then rebuilds the indexes of ORDERS, a tenth of its size with a primary
// key and a secondary index (2.6.2.2), one by one and all together, and
// checks that the indexes, the rows and what lookups through them find
// are as before.
func testRebuild(t *testing.T, db dialect.Database, missing dialect.Target) {
	ctx := subtestContext(t)
	r, ok := db.(dialect.IndexRebuilder)
	if !ok {
		t.Skipf("%s does not implement dialect.IndexRebuilder", db.Name())
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()

	lines, err := r.Indexes(ctx, tpcc.OrderLine)
	if err != nil {
		t.Fatalf("Indexes(order_line): %v", err)
	}
	checkIndexes(t, "order_line", lines)
	// The primary key holds every ORDER-LINE row (or its key and a
	// pointer to it): on a TPC-C schema it is the table's largest index.
	if !lines[0].Primary {
		t.Errorf("largest index of order_line = %+v, want the primary key", lines[0])
	}

	before, err := r.Indexes(ctx, tpcc.Orders)
	if err != nil {
		t.Fatalf("Indexes(orders): %v", err)
	}
	checkIndexes(t, "orders", before)
	var primary, secondary *dialect.Index
	for i, ix := range before {
		switch {
		case ix.Primary && primary == nil:
			primary = &before[i]
		case !ix.Primary && secondary == nil:
			secondary = &before[i]
		}
	}
	if primary == nil || secondary == nil {
		t.Fatalf("Indexes(orders) = %+v: want the primary key and the customer index of TPC-C 2.6.2.2", before)
	}
	// What the rebuilds must keep: the rows, and what a lookup through
	// each index finds (Order-Status's last order of a customer, 2.6.2.2).
	probes := []string{
		"SELECT COUNT(*) FROM orders",
		"SELECT SUM(o_c_id) FROM orders",
		"SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_id BETWEEN 100 AND 199",
		"SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_c_id = 7",
	}
	want := make([]int64, len(probes))
	for i, q := range probes {
		want[i] = queryInt(ctx, t, c, q)
	}

	rb, err := r.RebuildIndex(ctx, tpcc.Orders, primary.Name)
	if err != nil {
		t.Fatalf("RebuildIndex(orders, %s): %v", primary.Name, err)
	}
	t.Logf("%s: rebuilt %s (%d bytes, clustered %v): %q, rewrites %s", db.Name(), primary.Name, primary.SizeBytes, primary.Clustered, rb.Statements, rb.Rewrites)
	checkRebuild(t, rb, primary.Clustered, dialect.RewritesIndex)
	rb, err = r.RebuildIndex(ctx, tpcc.Orders, secondary.Name)
	if err != nil {
		t.Fatalf("RebuildIndex(orders, %s): %v", secondary.Name, err)
	}
	checkRebuild(t, rb, false, dialect.RewritesIndex)
	rb, err = r.RebuildIndexes(ctx, tpcc.Orders)
	if err != nil {
		t.Fatalf("RebuildIndexes(orders): %v", err)
	}
	checkRebuild(t, rb, primary.Clustered, dialect.RewritesIndexes)

	after, err := r.Indexes(ctx, tpcc.Orders)
	if err != nil {
		t.Fatalf("Indexes(orders) after the rebuilds: %v", err)
	}
	if got, want := indexNames(after), indexNames(before); !slices.Equal(got, want) {
		t.Errorf("indexes of orders after the rebuilds = %q, want %q", got, want)
	}
	for i, q := range probes {
		if got := queryInt(ctx, t, c, q); got != want[i] {
			t.Errorf("%s after the rebuilds = %d, want %d", q, got, want[i])
		}
	}

	// What is not there is an undefined object, and nothing runs.
	if _, err := r.RebuildIndex(ctx, tpcc.Orders, "oltplab_no_such_index"); dialect.ClassOf(err) != dialect.ClassUndefinedObject {
		t.Errorf("RebuildIndex of a missing index: got %v (class %v), want class %v", err, dialect.ClassOf(err), dialect.ClassUndefinedObject)
	}
	empty := openDB(t, missing)
	if ixs, err := empty.(dialect.IndexRebuilder).Indexes(ctx, tpcc.OrderLine); dialect.ClassOf(err) != dialect.ClassUndefinedObject {
		t.Errorf("Indexes(order_line) of an empty database = %+v, %v (class %v), want class %v", ixs, err, dialect.ClassOf(err), dialect.ClassUndefinedObject)
	}
}

// checkIndexes: at least one index, named, sized or saying why not,
// largest first.
func checkIndexes(t *testing.T, table string, ixs []dialect.Index) {
	t.Helper()
	if len(ixs) == 0 {
		t.Fatalf("Indexes(%s) is empty, want its primary key at least", table)
	}
	for i, ix := range ixs {
		if ix.Name == "" || ix.SizeSource == "" || ix.SizeBytes == 0 || ix.SizeBytes < -1 {
			t.Errorf("Indexes(%s)[%d] = %+v: want a name, a size source and a positive size (or -1: unknown)", table, i, ix)
		}
		if ix.Clustered && !ix.Primary {
			t.Errorf("Indexes(%s)[%d] = %+v: clustered but not the primary key", table, i, ix)
		}
		if i > 0 && ix.SizeBytes > ixs[i-1].SizeBytes {
			t.Errorf("Indexes(%s) not largest first: %s (%d bytes) after %s (%d bytes)", table, ix.Name, ix.SizeBytes, ixs[i-1].Name, ixs[i-1].SizeBytes)
		}
	}
}

// checkRebuild: statements recorded, and a rebuild of a clustered index
// says it rewrote the table.
func checkRebuild(t *testing.T, rb dialect.Rebuild, clustered bool, want string) {
	t.Helper()
	if len(rb.Statements) == 0 || rb.Method == "" {
		t.Errorf("Rebuild = %+v: want the statements that ran and the method", rb)
	}
	if clustered {
		want = dialect.RewritesTable
	}
	if rb.Rewrites != want {
		t.Errorf("Rebuild.Rewrites = %q, want %q (clustered: %v)", rb.Rewrites, want, clustered)
	}
}

func indexNames(ixs []dialect.Index) []string {
	out := make([]string, len(ixs))
	for i, ix := range ixs {
		out[i] = ix.Name
	}
	slices.Sort(out)
	return out
}
