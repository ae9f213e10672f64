package tpchdriver_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/testenv"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/tpch"
	"github.com/oltplab/oltplab/internal/tpchdriver"
	"github.com/oltplab/oltplab/internal/tpchload"
)

// The tests build one SF 0.01 database per dialect and run every case on
// it in turn (a build is most of a case's time): the refresh functions
// take the next update sets each time, as the metadata records.

func TestSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	suite(t, dbtest.SQLite(t))
}
func TestPostgres(t *testing.T) { suite(t, dbtest.Postgres(t)) }
func TestMySQL(t *testing.T)    { suite(t, dbtest.MySQL(t)) }

func suite(t *testing.T, tg dialect.Target) {
	ctx := context.Background()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// A database without the schema is refused before anything runs.
	if _, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power}); !errors.Is(err, tpchload.ErrNoSchema) {
		t.Fatalf("no schema: got %v, want ErrNoSchema", err)
	}
	s, _ := tpch.ParseScale("0.01")
	// dbgen's text pool (300 MiB, which every run's update sets need) is
	// built once for the whole suite rather than once per run.
	pool := tpch.NewGenerator(s)
	defer runtime.KeepAlive(pool)
	built, err := tpchload.Build(ctx, db, tpchload.Options{Scale: s, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{t: t, db: db, orders: built.Rows["orders"], lines: built.Rows["lineitem"]}
	c.verify("after the build")

	ok := t.Run("Both", func(t *testing.T) { testBoth(t, db, c) }) &&
		t.Run("Timeout", func(t *testing.T) { testTimeout(t, db, c) }) &&
		t.Run("Canceled", func(t *testing.T) { testCanceled(t, db, c) })
	if !ok {
		return
	}
	chk, err := tpchload.Check(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !chk.Passed {
		t.Errorf("check after every case: %+v", chk.Checks)
	}
}

// counter keeps the ORDERS and LINEITEM rows the database must hold: the
// build's, plus what each RF1 inserted, minus what each RF2 deleted, as
// the results say (not as the metadata says).
type counter struct {
	t             *testing.T
	db            dialect.Database
	orders, lines int64
}

func (c *counter) apply(rfs ...tpch.RefreshTime) {
	for _, rf := range rfs {
		if rf.Outcome != tpch.Done {
			continue
		}
		sign := int64(1)
		if rf.Function == 2 {
			sign = -1
		}
		c.orders += sign * rf.Orders
		c.lines += sign * rf.LineItems
	}
}

// verify counts the rows and runs the check.
func (c *counter) verify(when string) {
	c.t.Helper()
	ctx := context.Background()
	sess, err := c.db.(dialect.TPCH).NewTPCHSession(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	defer sess.Close()
	for _, x := range []struct {
		table string
		want  int64
	}{{"orders", c.orders}, {"lineitem", c.lines}} {
		rows, err := sess.Query(ctx, "select count(*) from "+x.table)
		if err != nil {
			c.t.Fatal(err)
		}
		if got, _ := strconv.ParseInt(rows[0][0], 10, 64); got != x.want {
			c.t.Errorf("%s: %s has %d rows, want %d", when, x.table, got, x.want)
		}
	}
	chk, err := tpchload.Check(ctx, c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	if !chk.Passed {
		c.t.Errorf("%s: check failed: %+v", when, chk.Checks)
	}
}

// testBoth runs the performance test (power, then throughput with two
// streams): every query and refresh function is timed, the figures of
// clause 5.4 exist, each stream runs its order of clause 5.3.5.4 with its
// own seed, the refresh functions took the next update sets and recorded
// them, each RF1 and RF2 pair leaves ORDERS as it was, and the database
// checks out afterwards.
func testBoth(t *testing.T, db dialect.Database, c *counter) {
	ctx := context.Background()
	var mu sync.Mutex
	events := 0
	res, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Both, Streams: 2, Seed: 12345,
		Observe: func(tpchdriver.Event) { mu.Lock(); events++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	c.apply(res.Power.RF1, res.Power.RF2)
	c.apply(res.Throughput.Refresh...)
	if !res.Complete() || res.QphH == nil {
		for _, st := range append([]tpch.StreamResult{res.Power.Stream}, res.Throughput.Streams...) {
			for _, q := range st.Queries {
				if q.Outcome != tpch.Done {
					t.Logf("stream %d Q%d: %s %s", st.Stream, q.Query, q.Outcome, q.Error)
				}
			}
		}
		t.Fatalf("not complete: power absent %q; throughput absent %q; QphH absent %q",
			res.Power.Absent, res.Throughput.Absent, res.QphHAbsent)
	}
	if want := 22 + 2 + 2*22 + 4; events != want {
		t.Errorf("%d events, want %d", events, want)
	}
	if res.Power.RF1.Set != 1 || res.Power.RF2.Set != 1 {
		t.Errorf("power test's sets: RF1 %d RF2 %d, want 1", res.Power.RF1.Set, res.Power.RF2.Set)
	}
	if len(res.Throughput.Refresh) != 4 {
		t.Fatalf("%d refresh functions in the throughput test, want 4", len(res.Throughput.Refresh))
	}
	for i, rf := range res.Throughput.Refresh {
		if want := 2 + i/2; rf.Set != want || rf.Function != 1+i%2 {
			t.Errorf("refresh %d: RF%d of set %d, want RF%d of set %d", i, rf.Function, rf.Set, 1+i%2, want)
		}
	}
	// RF1 inserts as many orders as RF2 of the same set deletes (clause
	// 2.5.2 and 2.5.3: SF × 1500, as dbgen rounds it).
	sf, _ := tpch.ParseScale(res.Scale)
	n := sf.RefreshOrders()
	if o := res.Power.RF1.Orders; o != n || res.Power.RF2.Orders != o || res.Power.RF1.LineItems == 0 || res.Power.RF2.LineItems == 0 {
		t.Errorf("power test: RF1 %d orders %d lines, RF2 %d orders %d lines; want %d orders each and some lines",
			o, res.Power.RF1.LineItems, res.Power.RF2.Orders, res.Power.RF2.LineItems, n)
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
	same := 0
	for _, q := range []int{3, 10, 12} {
		if strings.Join(res.Power.Stream.ByQuery(q).Params, ",") == strings.Join(res.Throughput.Streams[0].ByQuery(q).Params, ",") {
			same++
		}
	}
	if same == 3 {
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
	c.verify("after the performance test")
}

// testTimeout: a timeout shorter than any query cuts every query off:
// each is recorded as timed out with no time, the figures are absent and
// say why, and the refresh functions still ran. A timeout some queries
// outlive stops them on the server and the stream goes on: no query
// fails. The next power test takes the next update set, with the build's
// seed.
func testTimeout(t *testing.T, db dialect.Database, c *counter) {
	ctx := context.Background()
	res, err := tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power, QueryTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	c.apply(res.Power.RF1, res.Power.RF2)
	for _, q := range res.Power.Stream.Queries {
		if q.Outcome != tpch.TimedOut || q.Seconds != 0 || q.Interval != 0 {
			t.Errorf("Q%d: %s after %v s (%s); want timed out with no time", q.Query, q.Outcome, q.Seconds, q.Error)
		}
	}
	if res.Power.Power != nil || !strings.Contains(res.Power.Absent, "timeout") {
		t.Errorf("Power@Size %v, absent %q: want none, saying a query timed out", res.Power.Power, res.Power.Absent)
	}
	if res.Power.RF1.Outcome != tpch.Done || res.Power.RF2.Outcome != tpch.Done {
		t.Errorf("refresh functions: %s, %s", res.Power.RF1.Outcome, res.Power.RF2.Outcome)
	}

	res, err = tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power, QueryTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.apply(res.Power.RF1, res.Power.RF2)
	for _, q := range res.Power.Stream.Queries {
		switch {
		case q.Outcome == tpch.Done && q.Seconds > 0:
		case q.Outcome == tpch.TimedOut && q.Seconds == 0:
		default:
			t.Errorf("Q%d with a 20 ms timeout: %s after %v s (%s); want done with a time or timed out without", q.Query, q.Outcome, q.Seconds, q.Error)
		}
	}

	// Q15's view was dropped after its timeout: the next Q15 can create it.
	m, err := tpchload.ReadMeta(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	res, err = tpchdriver.Run(ctx, db, tpchdriver.Options{Test: tpchdriver.Power})
	if err != nil {
		t.Fatal(err)
	}
	c.apply(res.Power.RF1, res.Power.RF2)
	if q := res.Power.Stream.ByQuery(15); q.Outcome != tpch.Done {
		t.Errorf("Q15 after a timed-out Q15: %s %s", q.Outcome, q.Error)
	}
	if res.Power.RF1.Set != m.RF1Sets+1 || res.Power.RF1.Outcome != tpch.Done || res.Seed != m.QGenSeed {
		t.Errorf("power test: RF1 set %d (%s), seed %d; want set %d, done, the build's seed %d",
			res.Power.RF1.Set, res.Power.RF1.Outcome, res.Seed, m.RF1Sets+1, m.QGenSeed)
	}
	if res.QphH != nil || !strings.Contains(res.QphHAbsent, "--test both") {
		t.Errorf("power alone: QphH %v, absent %q", res.QphH, res.QphHAbsent)
	}
	c.verify("after the timed-out tests")
}

// testCanceled: Ctrl-C during a run ends it with the cancellation; what
// did not run is recorded as not run, never as a time, and the database
// still checks out (RF1 ran and recorded itself, RF2 did not).
func testCanceled(t *testing.T, db dialect.Database, c *counter) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
	c.apply(res.Power.RF1, res.Power.RF2)
	if q := res.Power.Stream.Queries[5]; q.Outcome != tpch.NotRun || q.Seconds != 0 {
		t.Errorf("sixth query: %s %v", q.Outcome, q.Seconds)
	}
	if res.Power.RF1.Outcome != tpch.Done || res.Power.RF2.Outcome != tpch.NotRun || res.Power.Power != nil {
		t.Errorf("RF1 %s, RF2 %s, Power@Size %v", res.Power.RF1.Outcome, res.Power.RF2.Outcome, res.Power.Power)
	}
	c.verify("after the interrupted test")
}
