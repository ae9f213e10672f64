package sqlserver

import (
	"context"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// TestLoadStartsARefusedBulkCopyAgain: a bulk copy refused at its start
// (here its connection closed before it; on Babelfish, now and then, a
// refused stream) is started again on a new connection, and the table
// gets every row once; one that fails midway fails the load (its first
// rows may be in).
func TestLoadStartsARefusedBulkCopyAgain(t *testing.T) {
	for _, c := range []struct {
		name    string
		closeAt int // the row before which the connection is closed
		fails   bool
	}{
		{"at the start of the second bulk copy", maxBulkRows/4 + 1, false},
		{"midway through a bulk copy", maxBulkRows / 8, true},
	} {
		t.Run(c.name, func(t *testing.T) { testLoadRetry(t, c.closeAt, c.fails) })
	}
}

func testLoadRetry(t *testing.T, closeAt int, fails bool) {
	d, _ := openTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := d.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	dl, err := d.NewLoader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := dl.(*loader)
	n := 0
	gen := tpcc.NewGenerator(42, tpcc.Constants{CLast: 157, CID: 500, OLIID: 4000}, time.Now())
	err = gen.Items(func(r tpcc.Row) error {
		n++
		if n == maxBulkRows/4+1 {
			// A bulk copy of its own for the rows after: a new table's.
			if err := l.done(); err != nil {
				return err
			}
		}
		if n == closeAt {
			_ = l.c.Close()
		}
		return l.Add(ctx, r)
	})
	if err == nil {
		err = l.Close(ctx)
	}
	if fails {
		if err == nil {
			t.Fatal("load with a connection lost midway through a bulk copy succeeded, want an error")
		}
		return
	}
	if err != nil {
		t.Fatalf("load with a connection lost before a bulk copy: %v", err)
	}
	var rows, distinct int64
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT i_id) FROM item").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != tpcc.ItemCount || distinct != tpcc.ItemCount {
		t.Errorf("item holds %d rows, %d distinct, want %d once each", rows, distinct, tpcc.ItemCount)
	}
}
