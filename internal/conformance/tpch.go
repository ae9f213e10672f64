package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchload"
	"github.com/oltplab/oltplab/internal/tpchref"
)

// RunTPCH runs the TPC-H suite on d at each scale factor: the dialect
// builds the population through tpchload (its dialect.TPCH ability), holds
// every generated row, answers the 22 queries with the validation
// parameters (clause 2.4.N.4) as the reference does within the precision
// of clause 2.1.3.5 (DuckDB's answers over tpchgen-cli's rows, through
// tpchref), and, at the first scale, runs one stream of the queries with
// parameters qgen draws from a new seed.
func RunTPCH(t *testing.T, d Dialect, scales ...string) {
	for i, sf := range scales {
		t.Run("SF"+sf, func(t *testing.T) {
			scale, err := tpch.ParseScale(sf)
			if err != nil {
				t.Fatal(err)
			}
			want := tpchref.Answers(t, sf)
			db := openDB(t, d.Open(t))
			h, ok := db.(dialect.TPCH)
			if !ok {
				t.Fatalf("%s has no TPC-H ability (dialect.TPCH)", db.Name())
			}
			ctx := subtestContext(t)
			res, err := tpchload.Build(ctx, db, tpchload.Options{Scale: scale, Workers: 2})
			if err != nil {
				t.Fatalf("build SF %s: %v", sf, err)
			}
			t.Logf("built SF %s with %d workers: text pool %.1fs, load %.1fs, indexes %.1fs, analyze %.1fs",
				sf, res.Workers, res.TextSeconds, res.LoadSeconds, res.IndexSeconds, res.AnalyzeSeconds)
			s, err := h.NewTPCHSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			t.Run("rows", func(t *testing.T) { testTPCHRows(t, s, scale, res) })
			t.Run("answers", func(t *testing.T) {
				for q := 1; q <= tpch.Queries; q++ {
					p, err := tpch.ValidationParams(q, scale)
					if err != nil {
						t.Fatal(err)
					}
					got, took, err := runTPCHQuery(ctx, s, h.TPCHFlavor(), p, 0)
					if err != nil {
						t.Errorf("Q%d: %v", q, err)
						continue
					}
					t.Logf("Q%d: %d rows in %s", q, len(got), took.Round(time.Millisecond))
					if err := tpch.CompareAnswer(q, got, want[q]); err != nil {
						t.Error(err)
					}
				}
			})
			t.Run("drawn parameters", func(t *testing.T) {
				if i > 0 {
					t.Skip("run at the first scale only")
				}
				g, err := tpch.NewQGen(time.Now().UnixNano()%(1<<31-2)+1, scale)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range tpch.StreamQueries(1) {
					p, err := g.Params(q)
					if err != nil {
						t.Fatal(err)
					}
					if _, _, err := runTPCHQuery(ctx, s, h.TPCHFlavor(), p, 1); err != nil {
						t.Errorf("Q%d with %q (qgen seed %d): %v", q, p.Values, g.Seed(), err)
					}
				}
			})
		})
	}
}

// testTPCHRows counts each table's rows: what the build loaded, and for
// every table but LINEITEM the cardinality of clause 4.2.5.
func testTPCHRows(t *testing.T, s dialect.TPCHSession, scale tpch.Scale, res tpchload.Result) {
	ctx := subtestContext(t)
	for _, tb := range tpch.Tables {
		rows, err := s.Query(ctx, "select count(*) from "+tb.String())
		if err != nil {
			t.Fatal(err)
		}
		got := rows[0][0]
		if want := fmt.Sprint(res.Rows[tb.String()]); got != want {
			t.Errorf("%s holds %s rows, the build loaded %s", tb, got, want)
		}
		if n, exact := scale.Rows(tb); exact && got != fmt.Sprint(n) {
			t.Errorf("%s holds %s rows, want %d (clause 4.2.5)", tb, got, n)
		}
	}
}

// runTPCHQuery renders p in flavor f for stream and runs it on s, setup
// and teardown statements included; it returns the answer and the time
// the answer's statement took.
func runTPCHQuery(ctx context.Context, s dialect.TPCHSession, f tpch.Flavor, p tpch.Params, stream int) ([][]string, time.Duration, error) {
	q, err := p.Render(f, stream)
	if err != nil {
		return nil, 0, err
	}
	for _, st := range q.Setup {
		if err := s.Exec(ctx, st); err != nil {
			return nil, 0, err
		}
	}
	start := time.Now()
	rows, err := s.Query(ctx, q.Text)
	took := time.Since(start)
	for _, st := range q.Teardown {
		err = errors.Join(err, s.Exec(ctx, st))
	}
	return rows, took, err
}
