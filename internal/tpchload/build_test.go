package tpchload

import (
	"testing"

	"github.com/oltplab/oltplab/internal/tpch"
)

// TestJobs: the chunks cover every row of every generated table once,
// largest tables first, in as many chunks as the plan gives them.
func TestJobs(t *testing.T) {
	for _, c := range []struct {
		sf      string
		workers int
	}{{"0.01", 1}, {"0.01", 3}, {"1", 8}} {
		s, _ := tpch.ParseScale(c.sf)
		jobs, err := Jobs(s, c.workers)
		if err != nil {
			t.Fatal(err)
		}
		covered := map[tpch.Table]int64{}
		chunks := map[tpch.Table]int{}
		for _, j := range jobs {
			if j.First != covered[j.Table]+1 {
				t.Fatalf("SF %s, %d workers: %v does not follow row %d", c.sf, c.workers, j, covered[j.Table])
			}
			covered[j.Table] += j.Count
			chunks[j.Table]++
		}
		for _, tb := range tpch.GeneratedTables {
			if rows, _ := s.Rows(tb); covered[tb] != rows {
				t.Errorf("SF %s: %d rows of %s in chunks, want %d", c.sf, covered[tb], tb, rows)
			}
		}
		if jobs[0].Table != tpch.Orders || chunks[tpch.Orders] != 4*c.workers || chunks[tpch.Part] != 2*c.workers {
			t.Errorf("SF %s, %d workers: %d ORDERS chunks first? (%v), %d PART chunks", c.sf, c.workers,
				chunks[tpch.Orders], jobs[0].Table, chunks[tpch.Part])
		}
	}
}
