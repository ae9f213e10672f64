package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
)

// testBackend is a backend the conformance suite runs against: a SQLite
// file, always, and a fresh database on the private PostgreSQL server
// scripts/testservers.sh starts (skipped without it on a developer
// machine, never under CI: see dbtest), with a fresh schema in it for
// every store (creating a database takes a second or two; a schema, a
// few milliseconds).
type testBackend struct {
	name string
	// location returns where a new, empty store goes.
	location func(t *testing.T) string
	// hold locks the runs of the store at location as another program
	// would, until release.
	hold func(t *testing.T, location string) (release func())
	// creationTrials is how many times TestConcurrentCreation races
	// processes creating a store (a database each in PostgreSQL).
	creationTrials int
}

// opener opens a fresh store with a clock that advances one second per
// reading.
type opener func(t *testing.T) *Store

// open opens a fresh store of the backend.
func (b testBackend) open(t *testing.T) *Store {
	t.Helper()
	return openTestAt(t, b.location(t))
}

// testBackends returns the backends, ready for t and its subtests.
func testBackends(t *testing.T) []testBackend {
	return []testBackend{sqliteTest, postgresTest(t)}
}

var sqliteTest = testBackend{
	name:           "sqlite",
	creationTrials: 8,
	location:       func(t *testing.T) string { return filepath.Join(t.TempDir(), "results.db") },
	// Another process holds the file in an exclusive transaction.
	hold: func(t *testing.T, location string) func() {
		lock := startChild(t, "lock "+location)
		lock.expect(t, "locked")
		return func() {
			lock.stdin.Close()
			lock.expect(t, "released")
		}
	},
}

// postgresTest is the PostgreSQL backend: a fresh database for t, a
// fresh schema in it for each store.
func postgresTest(t *testing.T) testBackend {
	var db dialect.Target
	if os.Getenv("OLTPLAB_TEST_POSTGRES") != "" {
		db = dbtest.Postgres(t)
	}
	return testBackend{
		name:           "postgres",
		creationTrials: 3,
		location: func(sub *testing.T) string {
			sub.Helper()
			if db.URL == nil {
				return postgresLocation(sub) // skipped, or failed under CI, by dbtest
			}
			return postgresSchema(sub, db)
		},
		// Another session holds the runs table in an exclusive lock.
		hold: func(t *testing.T, location string) func() {
			ctx := context.Background()
			c, err := pgx.Connect(ctx, location)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `LOCK TABLE runs IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			released := false
			release := func() {
				if !released {
					released = true
					_ = tx.Rollback(ctx)
					_ = c.Close(ctx)
				}
			}
			t.Cleanup(release)
			return release
		},
	}
}

// postgresLocation creates a fresh database for a store and returns its
// URL, password included, as a user would give it. Results a PostgreSQL
// store cannot take go to oltplab's data directory: a temporary one here.
func postgresLocation(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	return dbtest.RawURL(dbtest.Postgres(t))
}

// postgresSchema creates a fresh schema in db for a store and returns the
// URL that selects it (?search_path=NAME), dropping it when t ends.
func postgresSchema(t *testing.T, db dialect.Target) string {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "store_" + hex.EncodeToString(b[:])
	raw := dbtest.RawURL(db)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// conformance is every behaviour a store has, whatever its backend.
var conformance = []struct {
	name string
	run  func(t *testing.T, b testBackend)
}{
	{"OpenTwiceIsIdempotent", testOpenTwiceIsIdempotent},
	{"TwoWritersShareAStore", testTwoWritersShareAStore},
	{"RunRoundTrip", fresh(testRunRoundTrip)},
	{"RunErrors", fresh(testRunErrors)},
	{"ListRuns", fresh(testListRuns)},
	{"Profiles", fresh(testProfiles)},
	{"UpdateProfileParams", fresh(testUpdateProfileParams)},
	{"CreateRunRefusesPasswords", fresh(testCreateRunRefusesPasswords)},
	{"CreateProfileRefusesPasswords", fresh(testCreateProfileRefusesPasswords)},
	{"ExperimentLifecycle", fresh(testExperimentLifecycle)},
	{"RunsAndProfilesOfAnExperiment", fresh(testRunsAndProfilesOfAnExperiment)},
	{"HistogramsMergeExactly", fresh(testHistogramsMergeExactly)},
	{"PutHistogramsReplacesAndChecksRun", fresh(testPutHistogramsReplacesAndChecksRun)},
	{"MergeHistogramsRefusesDroppedValues", fresh(testMergeHistogramsRefusesDroppedValues)},
	{"SamplesRoundTrip", fresh(testSamplesRoundTrip)},
	{"AddSamplesRefusesBadBatches", fresh(testAddSamplesRefusesBadBatches)},
	{"ImportRefusesOtherFiles", fresh(testImportRefusesOtherFiles)},
	{"ImportTrustsOnlyItsOwnFiles", fresh(testImportTrustsOnlyItsOwnFiles)},
	{"ImportUntagged", fresh(testImportUntagged)},
	{"ShardRendezvous", fresh(testShardRendezvous)},
	{"Leftovers", fresh(testLeftovers)},
	{"CompleteDurablyWaitsForALock", testCompleteDurablyWaitsForALock},
	{"CompleteDurablySavesWhatItCannotStore", testCompleteDurablySavesWhatItCannotStore},
	{"SameSchema", testSameSchema},
}

// fresh adapts a case that only needs fresh stores.
func fresh(f func(t *testing.T, open opener)) func(t *testing.T, b testBackend) {
	return func(t *testing.T, b testBackend) { f(t, b.open) }
}

// TestConformance runs the same cases against every backend: one store
// API, one behaviour.
func TestConformance(t *testing.T) {
	for _, b := range testBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) { c.run(t, b) })
			}
		})
	}
}

// testSameSchema: a migrated store has the same tables, and the same
// columns in the same order, whatever its backend, and its schema
// version is this oltplab's.
func testSameSchema(t *testing.T, b testBackend) {
	ctx := context.Background()
	s := b.open(t)
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion() {
		t.Errorf("schema version %d (%v), want %d", v, err, SchemaVersion())
	}
	for table, want := range map[string]string{
		"runs": "id kind label profile_id step repeat vus status started_at ended_at target dialect tool_version seed params context summary error " +
			"experiment_id experiment_seq superseded uid writer_pid writer_host writer_started",
		"profiles":          "id label status created_at ended_at params context experiment_id experiment_seq uid writer_pid writer_host writer_started",
		"histograms":        "run_id tx hdr",
		"samples":           "run_id t_ms source metric device value",
		"experiments":       "id name status created_at ended_at plan_file plan plan_sha256 params owner error",
		"experiment_steps":  "experiment_id seq step_index kind target state attempts started_at ended_at progress outcome error",
		"schema_migrations": "version applied_at",
		"shard_arrivals":    "shard_group shard_index shard_count arrived_at writer_pid writer_host",
	} {
		rows, err := s.db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE 1 = 0`)
		if err != nil {
			t.Fatalf("table %s: %v", table, err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cols, " "); got != want {
			t.Errorf("table %s: got columns %s, want %s", table, got, want)
		}
	}
}
