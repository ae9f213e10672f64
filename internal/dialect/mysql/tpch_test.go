package mysql_test

import (
	"context"
	"fmt"
	"testing"

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
