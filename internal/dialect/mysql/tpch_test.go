package mysql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/dialect/mysql"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// TestTPCHInsertLoad builds SF 0.01 with the multi-row INSERT fallback
// (a server that refuses LOCAL INFILE) and checks what it loaded against
// the generated rows: counts and sums of each table's first and a decimal
// column. The conformance suite covers LOAD DATA.
func TestTPCHInsertLoad(t *testing.T) {
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mysql.UseInsertLoad(db)
	s, _ := tpch.ParseScale("0.01")
	res, err := tpchload.Build(ctx, db, tpchload.Options{Scale: s, Workers: 2})
	if err != nil {
		t.Fatalf("build with INSERT: %v", err)
	}

	// The generated figures: rows, the sum of the first column (a key)
	// and of the first decimal column, per table.
	type figures struct {
		rows, keys int64
		money      float64
	}
	want := map[tpch.Table]*figures{}
	g := tpch.NewGenerator(s)
	var args []any
	for _, tb := range tpch.GeneratedTables {
		cs, _ := s.Chunks(tb, 1)
		err := g.Generate(cs[0], func(r tpch.Row) error {
			f := want[r.Table()]
			if f == nil {
				f = &figures{}
				want[r.Table()] = f
			}
			args = r.AppendArgs(args[:0])
			f.rows++
			f.keys += args[0].(int64)
			for i, c := range r.Table().Columns() {
				if c.Type == tpch.Decimal {
					f.money += args[i].(float64)
					break
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sess, err := db.(dialect.TPCH).NewTPCHSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, tb := range tpch.Tables {
		cols := tb.Columns()
		money := "0"
		for _, c := range cols {
			if c.Type == tpch.Decimal {
				money = c.Name
				break
			}
		}
		rows, err := sess.Query(ctx, fmt.Sprintf("select count(*), sum(%s), sum(%s) from %s", cols[0].Name, money, tb))
		if err != nil {
			t.Fatal(err)
		}
		w := want[tb]
		if got := fmt.Sprint(res.Rows[tb.String()]); got != fmt.Sprint(w.rows) {
			t.Errorf("%s: the build counted %s rows, generated %d", tb, got, w.rows)
		}
		if rows[0][0] != fmt.Sprint(w.rows) || rows[0][1] != fmt.Sprint(w.keys) || rows[0][2] != fmt.Sprintf("%.2f", w.money) && money != "0" {
			t.Errorf("%s holds count, key sum, %s sum %q; generated %d, %d, %.2f", tb, money, rows[0], w.rows, w.keys, w.money)
		}
	}
}

// TestTPCHSessionCutOff: a query whose context ends is stopped on the
// server, and the session runs the next query on a new connection: each
// of several cut-off queries in a row, then one that completes.
func TestTPCHSessionCutOff(t *testing.T) {
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sess, err := db.(dialect.TPCH).NewTPCHSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for i := range 3 {
		qctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := sess.Query(qctx, "select sleep(5)")
		cancel()
		if err == nil || qctx.Err() == nil {
			t.Fatalf("cut-off query %d: %v, context %v", i, err, qctx.Err())
		}
		rows, err := sess.Query(ctx, "select 1 + 1")
		if err != nil || len(rows) != 1 || rows[0][0] != "2" {
			t.Fatalf("after cut-off query %d: %v %v", i, rows, err)
		}
	}
	// Every query with a deadline: the cut-off ones and those that
	// complete within it, alternately; and one whose deadline passed
	// before it started.
	for i := range 6 {
		qctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		q := "select 1 + 1"
		if i%2 == 0 {
			q = "select sleep(5)"
		}
		if i == 4 {
			cancel()
		}
		rows, err := sess.Query(qctx, q)
		cancel()
		if i%2 == 1 && (err != nil || len(rows) != 1 || rows[0][0] != "2") {
			t.Errorf("query %d within its deadline, after a cut-off one: %v %v", i, rows, err)
		}
	}
	// No statement of the test's is left running on the server (the
	// kills are sent as the queries are cut off: wait for them).
	var left []string
	for range 50 {
		rows, err := sess.Query(ctx, "select id from information_schema.processlist where info like 'select sleep%'")
		if err != nil {
			t.Fatal(err)
		}
		if left = nil; len(rows) == 0 {
			return
		}
		for _, r := range rows {
			left = append(left, r[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("statements cut off still running on the server, ids %v", left)
}
