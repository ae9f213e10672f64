package tpch

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestInterval holds the rounding of clause 5.3.7.5 to its examples.
func TestInterval(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{23.74, 23.7}, {23.75, 23.8}, {0.04, 0.1}, {0.049, 0.1}, {0.05, 0.1}, {0.14, 0.1}, {0.15, 0.2}, {0, 0.1}, {100, 100},
	} {
		if got := Interval(c.in); got != c.want {
			t.Errorf("Interval(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestPower computes Power@Size by hand: every query 2 s and both
// refresh functions 8 s at SF 1 give 3600 / (2^22 × 8^2)^(1/24).
func TestPower(t *testing.T) {
	s, _ := ParseScale("1")
	var in PowerInputs
	for i := range in.Queries {
		in.Queries[i] = 2
	}
	in.Refresh = [2]float64{8, 8}
	got, _, err := Power(s, in)
	if err != nil {
		t.Fatal(err)
	}
	want := 3600 / math.Pow(math.Pow(2, 22)*64, 1.0/24)
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("Power = %v, want %v", got, want)
	}
	// SF 10: ten times as much.
	s10, _ := ParseScale("10")
	if got10, _, _ := Power(s10, in); math.Abs(got10-10*want) > 1e-6 {
		t.Errorf("Power at SF 10 = %v, want %v", got10, 10*want)
	}
}

// TestPowerFloor: with the longest query over 1000 times the shortest,
// the short ones count as the longest's thousandth (clause 5.4.1.4).
func TestPowerFloor(t *testing.T) {
	s, _ := ParseScale("1")
	var in PowerInputs
	for i := range in.Queries {
		in.Queries[i] = 1
	}
	in.Queries[0] = 500  // longest: floor 0.5
	in.Queries[1] = 0.01 // 0.1 after 5.3.7.5, below the floor
	in.Refresh = [2]float64{1, 1}
	_, used, err := Power(s, in)
	if err != nil {
		t.Fatal(err)
	}
	if used[1] != 0.5 || used[2] != 1 || used[0] != 500 {
		t.Errorf("intervals used: Q1 %v Q2 %v Q3 %v, want 500, 0.5, 1", used[0], used[1], used[2])
	}
	in.Queries[0] = 50 // ratio 500: no floor
	if _, used, _ = Power(s, in); used[1] != 0.1 {
		t.Errorf("ratio 500: Q2 counted %v, want 0.1", used[1])
	}
}

func TestThroughputAndQphH(t *testing.T) {
	s, _ := ParseScale("0.1")
	got, err := Throughput(s, 2, 44)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 22 * 3600 / 44.0 * 0.1; math.Abs(got-want) > 1e-9 {
		t.Errorf("Throughput = %v, want %v", got, want)
	}
	if _, err := Throughput(s, 0, 44); err == nil {
		t.Error("no stream: want an error")
	}
	if q := QphH(100, 400); q != 200 {
		t.Errorf("QphH(100, 400) = %v, want 200", q)
	}
}

func TestMinStreams(t *testing.T) {
	for _, c := range []struct {
		sf     string
		want   int
		listed bool
	}{{"0.1", 0, false}, {"1", 2, true}, {"3", 2, false}, {"10", 3, true}, {"100", 5, true}, {"1000", 7, true}, {"29999", 9, false}} {
		s, err := ParseScale(c.sf)
		if err != nil {
			t.Fatal(err)
		}
		if n, l := s.MinStreams(); n != c.want || l != c.listed {
			t.Errorf("SF %s: MinStreams() = %d, %v; want %d, %v", c.sf, n, l, c.want, c.listed)
		}
	}
}

func TestStreamSeed(t *testing.T) {
	if got := StreamSeed(100, 3); got != 103 {
		t.Errorf("StreamSeed(100, 3) = %d", got)
	}
	if got := StreamSeed(rngM-1, 1); got != 1 {
		t.Errorf("StreamSeed at the top of the range = %d, want 1 (wrapped)", got)
	}
}

// TestPowerResultAbsent: a query without a time leaves Power@Size
// absent, saying which; complete, it is computed and each stream has its
// geometric mean.
func TestPowerResultAbsent(t *testing.T) {
	s, _ := ParseScale("0.01")
	p := PowerResult{RF1: RefreshTime{Function: 1, Outcome: Done, Seconds: 0.3}, RF2: RefreshTime{Function: 2, Outcome: Done, Seconds: 0.2}}
	for i, q := range StreamQueries(0) {
		p.Stream.Queries = append(p.Stream.Queries, QueryTime{Query: q, Position: i + 1, Outcome: Done, Seconds: float64(q) / 10})
	}
	p.Finish(s)
	if p.Power == nil || p.Stream.GeoMean == nil || p.Absent != "" {
		t.Fatalf("complete power test: power %v, geomean %v, absent %q", p.Power, p.Stream.GeoMean, p.Absent)
	}
	p.Stream.ByQuery(7).Outcome, p.Stream.ByQuery(7).Seconds = TimedOut, 0
	p.Finish(s)
	if p.Power != nil || p.Stream.GeoMean != nil || !strings.Contains(p.Absent, "Q7 timeout") {
		t.Errorf("Q7 timed out: power %v, geomean %v, absent %q; want none, saying Q7 timed out", p.Power, p.Stream.GeoMean, p.Absent)
	}
}

func TestThroughputResultAbsent(t *testing.T) {
	s, _ := ParseScale("0.01")
	tr := ThroughputResult{Seconds: 30}
	for st := 1; st <= 2; st++ {
		sr := StreamResult{Stream: st}
		for i, q := range StreamQueries(st) {
			sr.Queries = append(sr.Queries, QueryTime{Stream: st, Query: q, Position: i + 1, Outcome: Done, Seconds: 1})
		}
		tr.Streams = append(tr.Streams, sr)
		tr.Refresh = append(tr.Refresh, RefreshTime{Function: 1, Set: st + 1, Outcome: Done, Seconds: 1},
			RefreshTime{Function: 2, Set: st + 1, Outcome: Done, Seconds: 1})
	}
	tr.Finish(s)
	if tr.Throughput == nil {
		t.Fatalf("complete: absent %q", tr.Absent)
	}
	tr.Refresh[3].Outcome = Failed
	tr.Finish(s)
	if tr.Throughput != nil || !strings.Contains(tr.Absent, "RF2 of set 3 error") {
		t.Errorf("RF2 failed: throughput %v, absent %q", tr.Throughput, tr.Absent)
	}
}

// TestRefreshStatements renders update set 1 at SF 0.01: RF1 inserts the
// set's orders and line items as RefreshInserts emits them, RF2 deletes
// the set's keys, line items first.
func TestRefreshStatements(t *testing.T) {
	s, _ := ParseScale("0.01")
	g := NewGenerator(s)
	rf1, err := g.RF1Statements(1, StandardSQL{})
	if err != nil {
		t.Fatal(err)
	}
	var orders, lines int64
	if err := g.RefreshInserts(1, func(r Row) error {
		if r.Table() == Orders {
			orders++
		} else {
			lines++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rf1.Orders != orders || rf1.LineItem != lines || orders != s.RefreshOrders() {
		t.Errorf("RF1: %d orders, %d line items; the set has %d and %d", rf1.Orders, rf1.LineItem, orders, lines)
	}
	if len(rf1.Statements) != 2 || !strings.HasPrefix(rf1.Statements[0], "INSERT INTO orders (o_orderkey, o_custkey,") ||
		!strings.HasPrefix(rf1.Statements[1], "INSERT INTO lineitem (l_orderkey,") {
		t.Fatalf("RF1 statements: %.200q", rf1.Statements)
	}
	if n := strings.Count(rf1.Statements[1], "), ("); int64(n+1) != lines {
		t.Errorf("RF1's line item insert has %d tuples, want %d", n+1, lines)
	}
	if !strings.Contains(rf1.Statements[0], ", date '199") {
		t.Errorf("RF1's dates are not written by the flavor: %.300s", rf1.Statements[0])
	}
	rf2, err := s.RF2Statements(1)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := s.RefreshDeletes(1)
	want := fmt.Sprintf("DELETE FROM lineitem WHERE l_orderkey IN (%d, ", keys[0])
	if len(rf2.Statements) != 2 || !strings.HasPrefix(rf2.Statements[0], want) || !strings.HasPrefix(rf2.Statements[1], "DELETE FROM orders WHERE o_orderkey IN (") ||
		rf2.Orders != int64(len(keys)) {
		t.Errorf("RF2: %q", rf2.Statements)
	}
	deleted, err := g.RefreshLinesDeleted(1)
	if err != nil || deleted < rf2.Orders || deleted > 7*rf2.Orders {
		t.Errorf("RefreshLinesDeleted(1) = %d, %v: want 1 to 7 per order of %d", deleted, err, rf2.Orders)
	}
}

func TestOrphansSQL(t *testing.T) {
	fk := ForeignKey{LineItem, []string{"l_partkey", "l_suppkey"}, PartSupp}
	want := "select count(*) from lineitem c where not exists (select 1 from partsupp p where p.ps_partkey = c.l_partkey and p.ps_suppkey = c.l_suppkey)"
	if got := fk.OrphansSQL(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
