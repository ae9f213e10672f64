package tpchdriver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchdriver"
	"github.com/oltplab/oltplab/internal/tpchload"
)

func buildSQLite(t *testing.T, sf string) dialect.Database {
	t.Helper()
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := tpch.ParseScale(sf)
	if _, err := tpchload.Build(ctx, db, tpchload.Options{Scale: s, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestRunBoth runs the performance test (power, then throughput with two
// streams) on SQLite at SF 0.01: every query and refresh function is
// timed, the figures of clause 5.4 exist, each stream runs its order of
// clause 5.3.5.4 with its own seed, the refresh functions took the next
// update sets and recorded them, and the database checks out afterwards.
func TestRunBoth(t *testing.T) {
	db := buildSQLite(t, "0.01")
	ctx := context.Background()
	var mu sync.Mutex
	events := 0
	res, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Both, Streams: 2, Seed: 12345,
		Observe: func(tpchdriver.Event) { mu.Lock(); events++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || res.QphH == nil {
		t.Fatalf("not complete: power %+v absent %q; throughput absent %q; QphH absent %q", res.Power.Power, res.Power.Absent,
			res.Throughput.Absent, res.QphHAbsent)
	}
	if want := 22 + 2 + 2*22 + 4; events != want {
		t.Errorf("%d events, want %d", events, want)
	}
	if res.Power.RF1.Set != 1 || res.Power.RF2.Set != 1 {
		t.Errorf("power test's sets: RF1 %d RF2 %d, want 1", res.Power.RF1.Set, res.Power.RF2.Set)
	}
	for i, rf := range res.Throughput.Refresh {
		if want := 2 + i/2; rf.Set != want || rf.Function != 1+i%2 {
			t.Errorf("refresh %d: RF%d of set %d, want RF%d of set %d", i, rf.Function, rf.Set, 1+i%2, want)
		}
	}
	for _, st := range append([]tpch.StreamResult{res.Power.Stream}, res.Throughput.Streams...) {
		order := tpch.StreamQueries(st.Stream)
		for i, q := range st.Queries {
			if q.Query != order[i] || q.Position != i+1 || q.Interval < 0.1 {
				t.Errorf("stream %d position %d: Q%d interval %v, want Q%d", st.Stream, i+1, q.Query, q.Interval, order[i])
			}
		}
		if st.Seed != tpch.StreamSeed(12345, st.Stream) || st.GeoMean == nil {
			t.Errorf("stream %d: seed %d, geometric mean %v", st.Stream, st.Seed, st.GeoMean)
		}
	}
	if res.Power.Stream.Queries[0].Params[0] == res.Throughput.Streams[0].ByQuery(res.Power.Stream.Queries[0].Query).Params[0] &&
		res.Power.Stream.ByQuery(3).Params[1] == res.Throughput.Streams[0].ByQuery(3).Params[1] &&
		res.Power.Stream.ByQuery(10).Params[0] == res.Throughput.Streams[0].ByQuery(10).Params[0] {
		t.Errorf("streams 0 and 1 drew the same parameters: their seeds are not their own")
	}
	if !strings.Contains(strings.Join(res.Notes, " "), "not an audited TPC-H result") {
		t.Errorf("notes do not label the figures: %q", res.Notes)
	}
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if m.RF1Sets != 3 || m.RF2Sets != 3 {
		t.Errorf("metadata after the run: RF1 sets %d, RF2 sets %d; want 3 and 3", m.RF1Sets, m.RF2Sets)
	}
	chk, err := tpchload.Check(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !chk.Passed {
		t.Errorf("check after the refresh functions: %+v", chk.Checks)
	}

	// A second power test takes the next set.
	res2, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Power.RF1.Set != 4 || res2.Power.RF1.Outcome != tpch.Done || res2.Seed != m.QGenSeed {
		t.Errorf("second power test: RF1 set %d (%s), seed %d; want set 4, done, the build's seed %d", res2.Power.RF1.Set, res2.Power.RF1.Outcome, res2.Seed, m.QGenSeed)
	}
	if res2.QphH != nil || !strings.Contains(res2.QphHAbsent, "--test both") {
		t.Errorf("power alone: QphH %v, absent %q", res2.QphH, res2.QphHAbsent)
	}
}

// TestQueryTimeout: a timeout shorter than any query cuts every query
// off: each is recorded as timed out with no time, the figures are
// absent and say why, and the refresh functions still ran.
func TestQueryTimeout(t *testing.T) {
	db := buildSQLite(t, "0.01")
	res, err := tpchdriver.Run(context.Background(), db, tpchdriver.Options{Test: tpchdriver.Power, QueryTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range res.Power.Stream.Queries {
		if q.Outcome != tpch.TimedOut || q.Seconds != 0 || q.Interval != 0 {
			t.Errorf("Q%d: %s after %v s; want timed out with no time", q.Query, q.Outcome, q.Seconds)
		}
	}
	if res.Power.Power != nil || !strings.Contains(res.Power.Absent, "timeout") {
		t.Errorf("Power@Size %v, absent %q: want none, saying a query timed out", res.Power.Power, res.Power.Absent)
	}
	if res.Power.RF1.Outcome != tpch.Done || res.Power.RF2.Outcome != tpch.Done {
		t.Errorf("refresh functions: %s, %s", res.Power.RF1.Outcome, res.Power.RF2.Outcome)
	}
	// Q15's view was dropped after its timeout: the next Q15 can create it.
	res, err = tpchdriver.Run(context.Background(), db, tpchdriver.Options{Test: tpchdriver.Power})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Power.Stream.ByQuery(15); q.Outcome != tpch.Done {
		t.Errorf("Q15 after a timed-out Q15: %s %s", q.Outcome, q.Error)
	}
}

// TestCanceled: Ctrl-C during a run ends it with the cancellation; what
// did not run is recorded as not run, never as a time.
func TestCanceled(t *testing.T) {
	db := buildSQLite(t, "0.01")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power, Observe: func(e tpchdriver.Event) {
		if e.Query != nil {
			if n++; n == 3 {
				cancel()
			}
		}
	}})
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("got %v, interrupted %v; want the cancellation", err, res.Interrupted)
	}
	if q := res.Power.Stream.Queries[5]; q.Outcome != tpch.NotRun || q.Seconds != 0 {
		t.Errorf("sixth query: %s %v", q.Outcome, q.Seconds)
	}
	if res.Power.RF2.Outcome != tpch.NotRun || res.Power.Power != nil {
		t.Errorf("RF2 %s, Power@Size %v", res.Power.RF2.Outcome, res.Power.Power)
	}
}

// TestNoSchema: a database without the schema is refused before anything runs.
func TestNoSchema(t *testing.T) {
	db, err := dialect.Open(context.Background(), dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := tpchdriver.Run(context.Background(), db, tpchdriver.Options{Test: tpchdriver.Power}); !errors.Is(err, tpchload.ErrNoSchema) {
		t.Errorf("got %v, want ErrNoSchema", err)
	}
}
