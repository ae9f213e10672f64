package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// openTest opens a fresh SQLite store in a temporary directory with a
// clock that advances one second per reading.
func openTest(t *testing.T) *Store {
	t.Helper()
	return openTestAt(t, filepath.Join(t.TempDir(), "results.db"))
}

// openTestAt opens the store at location with a clock that advances one
// second per reading.
func openTestAt(t *testing.T, location string) *Store {
	t.Helper()
	s, err := Open(context.Background(), location)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	var mu sync.Mutex
	clock := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	s.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	return s
}

// rawDB opens the file behind the store's back, as another tool would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("raw open: %v", err)
	}
	return db
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return sha256.Sum256(b)
}

func TestOpenMigratesEmptyFile(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)

	var versions []int
	rows, err := s.db.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	rows.Close()
	if got, want := len(versions), len(migrations); got != want {
		t.Fatalf("got %d migrations recorded (%v), want %d", got, versions, want)
	}
	if got, want := versions[len(versions)-1], SchemaVersion(); got != want {
		t.Errorf("got schema version %d, want %d", got, want)
	}
	for _, table := range []string{"runs", "profiles", "histograms", "samples"} {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: got %d, want 1", table, n)
		}
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal mode: got %q, want wal", mode)
	}
	var appID int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		t.Fatal(err)
	}
	if appID != applicationID {
		t.Errorf("application id: got %#x, want %#x", appID, applicationID)
	}
}

func testOpenTwiceIsIdempotent(t *testing.T, b testBackend) {
	ctx := context.Background()
	path := b.location(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: "first"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	for i := range 2 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(migrations) {
			t.Errorf("reopen %d: got %d schema_migrations rows, want %d", i, n, len(migrations))
		}
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if r.Label != "first" {
			t.Errorf("reopen %d: got label %q, want first", i, r.Label)
		}
		s.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRun(ctx, Run{Kind: KindBuild, Label: "kept"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	newer := SchemaVersion() + 7
	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_migrations(version, applied_at) VALUES (?, '2030-01-01T00:00:00Z')`, newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := fileHash(t, path)

	_, err = Open(ctx, path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open: got %v, want ErrNewerSchema", err)
	}
	if after := fileHash(t, path); after != before {
		t.Errorf("the store file changed although it was refused")
	}

	db = rawDB(t, path)
	defer db.Close()
	var runs, version int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE label = 'kept'`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || version != newer {
		t.Errorf("after refusal: got %d runs and version %d, want 1 and %d", runs, version, newer)
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "tpcc.db")
	db := rawDB(t, foreign)
	if _, err := db.Exec(`CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("these are not the results you are looking for, padded to be longer than a header.........................................."), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{foreign, text} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			before := fileHash(t, path)
			_, err := Open(context.Background(), path)
			if !errors.Is(err, ErrNotStore) {
				t.Fatalf("got %v, want ErrNotStore", err)
			}
			if fileHash(t, path) != before {
				t.Errorf("file changed although it was refused")
			}
		})
	}
}

// TestOpenUnwritable: a store in a directory that does not exist, or that
// the user may not write, is refused with ErrUnwritable. Permissions do
// not stop root, so as root the read-only directory is tried by an
// unprivileged user: the test binary run again as nobody.
func TestOpenUnwritable(t *testing.T) {
	// Reachable by nobody when the test runs as root (t.TempDir's
	// parents are private).
	tmp, err := os.MkdirTemp("", "oltplab-store-test-")
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	readOnly := filepath.Join(tmp, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(readOnly, 0o700) })
	cases := []struct {
		name     string
		path     string
		needUser bool // root writes anywhere
	}{
		{"missing directory", filepath.Join(tmp, "no", "such", "dir", "results.db"), false},
		{"read-only directory", filepath.Join(readOnly, "results.db"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.needUser && os.Geteuid() == 0 {
				err = openAsNobody(t, tmp, c.path)
			} else {
				_, err = Open(context.Background(), c.path)
			}
			if !errors.Is(err, ErrUnwritable) {
				t.Fatalf("got %v, want ErrUnwritable", err)
			}
			if _, err := os.Stat(filepath.Dir(c.path)); c.name == "missing directory" && err == nil {
				t.Errorf("Open created the directory %s", filepath.Dir(c.path))
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OLTPLAB_RESULTS": "/data/r.db", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/data/r.db"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/oltplab/results.db"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/oltplab/results.db"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/oltplab/results.db"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.env), func(t *testing.T) {
			got, err := DefaultPath(func(k string) string { return c.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestOpenDefault(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Run("creates the XDG directory", func(t *testing.T) {
		env := map[string]string{"XDG_DATA_HOME": filepath.Join(tmp, "xdg")}
		s, err := OpenDefault(ctx, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got, want := s.Path(), filepath.Join(tmp, "xdg", "oltplab", "results.db"); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("does not create the OLTPLAB_RESULTS directory", func(t *testing.T) {
		env := map[string]string{"OLTPLAB_RESULTS": filepath.Join(tmp, "missing", "r.db")}
		_, err := OpenDefault(ctx, func(k string) string { return env[k] })
		if !errors.Is(err, ErrUnwritable) {
			t.Fatalf("got %v, want ErrUnwritable", err)
		}
	})
}

// testTwoWritersShareAStore stands in for two oltplab processes: two
// independent connection pools on one store, writing at the same time.
func testTwoWritersShareAStore(t *testing.T, b testBackend) {
	ctx := context.Background()
	path := b.location(t)
	const stores, workers, perWorker = 2, 4, 10
	var all []*Store
	for range stores {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		all = append(all, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, stores*workers)
	for i, s := range all {
		for w := range workers {
			wg.Go(func() {
				for n := range perWorker {
					id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: fmt.Sprintf("s%d-w%d-%d", i, w, n)})
					if err != nil {
						errs <- err
						return
					}
					if err := s.AddSamples(ctx, id, []Sample{{TMillis: 0, Source: SourceHost, Metric: "m", Value: 1}, {TMillis: 1000, Source: SourceHost, Metric: "m", Value: 2}}); err != nil {
						errs <- err
						return
					}
					if err := s.FinishRun(ctx, id, StatusOK, nil, ""); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	runs, err := all[0].ListRuns(ctx, RunFilter{Status: StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(runs), stores*workers*perWorker; got != want {
		t.Errorf("got %d finished runs, want %d", got, want)
	}
}

// copyFile copies a fixture to a temporary store path.
func copyFile(t *testing.T, from string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestOpenMigratesVersion1: a store written by oltplab before schema
// version 2 (testdata/results-v1.db: a build, a run, a check, and a run
// killed while running) is migrated in place; everything in it reads as
// before, and its running row, whose writer nobody recorded, is left as it
// was rather than guessed at.
func TestOpenMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := copyFile(t, filepath.Join("testdata", "results-v1.db"))
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open a version 1 store: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion() {
		t.Errorf("schema version after Open: %d (%v), want %d", v, err, SchemaVersion())
	}
	runs, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range runs {
		got += fmt.Sprintf("%d:%s:%s:%s ", r.ID, r.Kind, r.Label, r.Status)
		if r.UID != "" || r.Writer != (Writer{}) {
			t.Errorf("run %d from version 1 has identity %q, writer %+v", r.ID, r.UID, r.Writer)
		}
	}
	if want := "4:run:killed:running 3:check::ok 2:run:v1:ok 1:build::ok "; got != want {
		t.Errorf("runs: got %s, want %s", got, want)
	}
	if hs, err := s.MergeHistograms(ctx, 2); err != nil || hs["new_order"] == nil || hs["new_order"].TotalCount() == 0 {
		t.Errorf("histograms of run 2: %v (%v)", hs, err)
	}
	if sm, err := s.Samples(ctx, 2, SampleFilter{}); err != nil || len(sm) == 0 {
		t.Errorf("samples of run 2: %d (%v)", len(sm), err)
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindCheck})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetRun(ctx, id); err != nil || r.UID == "" || r.Writer.PID == 0 {
		t.Errorf("a new run in a migrated store: %+v (%v), want an identity and a writer", r, err)
	}
}

// TestOpenRefusesDamagedStore: 8 KB of garbage in the middle of a store
// (a bad disk, a careless copy) is found on open; nothing is written to
// the file, and the error says it is damaged. A value damaged inside a
// row, which the integrity check cannot see, is refused when read.
func TestOpenRefusesDamagedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteRun(ctx, id, testOutcome(1000)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 8<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + 0x1d)
	}
	if _, err := f.WriteAt(garbage, st.Size()/2/4096*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := fileHash(t, path)
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Open a damaged store: got %v, want ErrDamaged", err)
	}
	if fileHash(t, path) != before {
		t.Errorf("the damaged store was modified")
	}
	// A reader skips the whole-file check but finds the damage it reads.
	if rs, err := OpenToRead(ctx, path); err == nil {
		var n int
		err = rs.db.QueryRowContext(ctx, `SELECT count(*) FROM samples`).Scan(&n)
		if err = rs.classify(err); !errors.Is(err, ErrDamaged) {
			t.Errorf("reading a damaged table: got %v, want ErrDamaged", err)
		}
		rs.Close()
	} else if !errors.Is(err, ErrDamaged) {
		t.Errorf("OpenToRead a damaged store: got %v, want success or ErrDamaged", err)
	}
	if fileHash(t, path) != before {
		t.Errorf("a reader modified the damaged store")
	}

	t.Run("a damaged value", func(t *testing.T) {
		s := openTest(t)
		id, err := s.CreateRun(ctx, Run{Kind: KindRun})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteRun(ctx, id, testOutcome(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE runs SET summary = '{"nopm":'||char(29) WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRun(ctx, id); !errors.Is(err, ErrDamaged) {
			t.Errorf("GetRun: got %v, want ErrDamaged", err)
		}
		if _, err := s.ListRuns(ctx, RunFilter{}); !errors.Is(err, ErrDamaged) {
			t.Errorf("ListRuns: got %v, want ErrDamaged", err)
		}
	})
}

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name, in string
		want     ProcStat
		wantErr  bool
	}{
		{"plain", "23390 (cat) R 23386 23386 8998 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 215136 3133440 381 18446744073709551615", ProcStat{'R', 215136}, false},
		{"name with spaces and parentheses", "7 (a (b) c) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", ProcStat{'S', 99}, false},
		{"zombie", "7 (x) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", ProcStat{'Z', 99}, false},
		{"truncated", "7 (x) S 1 2 3", ProcStat{}, true},
		{"no name", "7 x S 1", ProcStat{}, true},
		{"not a number", "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 zz 0 0", ProcStat{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseProcStat(strings.NewReader(c.in))
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

// FuzzParseProcStat: any content of /proc/PID/stat gives a value or an
// error, never a panic.
func FuzzParseProcStat(f *testing.F) {
	f.Add("23390 (cat) R 23386 23386 8998 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 215136 3133440 381")
	f.Add("7 (a) b) S 1")
	f.Add(")")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = ParseProcStat(strings.NewReader(in))
	})
}

// FuzzImport: whatever a file given to `results import` holds, Import
// stores a valid result (once) or refuses it; it never panics. A file
// changed in any way fails its integrity tag.
func FuzzImport(f *testing.F) {
	ctx := context.Background()
	dir := f.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: "seed"})
	if err != nil {
		f.Fatal(err)
	}
	o := testOutcome(3)
	o.EndedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	good, err := s.saveOutcome(id, o)
	if err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:savedHeaderBytes])
	f.Add([]byte(`{"format":"` + savedFormatV1 + `"}`))
	f.Add([]byte(`{"format":"` + savedFormatV1 + `","run":{"Kind":"run","UID":"00000000000000000000000000000000","StartedAt":"2025-01-01T00:00:00Z"},"status":"ok","ended_at":"2025-01-01T00:00:00Z","histograms":{"x":"AAAA"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, untagged := range []bool{false, true} {
			imp, err := importBytes(s, in, ImportOptions{Untagged: untagged})
			if err != nil {
				continue
			}
			if !bytes.Equal(in, b) && !untagged {
				t.Errorf("Import took a tagged file that is not the one written")
			}
			r, err := s.GetRun(ctx, imp.RunID)
			if err != nil || r.Status == StatusRunning {
				t.Errorf("Import succeeded but run %d is %+v (%v)", imp.RunID, r.Status, err)
			}
			if _, err := importBytes(s, in, ImportOptions{Untagged: untagged}); !errors.Is(err, ErrAlreadyImported) {
				t.Errorf("second Import: %v; want ErrAlreadyImported", err)
			}
		}
	})
}

// FuzzOpenFile: whatever bytes the store file holds (another program's
// file, a truncated copy, garbage), Open either opens a store or refuses
// the file, never panics, and never changes a file it refuses.
func FuzzOpenFile(f *testing.F) {
	v1, err := os.ReadFile(filepath.Join("testdata", "results-v1.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v1)
	f.Add(v1[:4096])
	f.Add(v1[:100])
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(t.TempDir(), "results.db")
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), path)
		if err != nil {
			if b, _ := os.ReadFile(path); !bytes.Equal(b, in) {
				t.Errorf("Open refused the file (%v) but changed it", err)
			}
			return
		}
		defer s.Close()
		_, _ = s.ListRuns(context.Background(), RunFilter{})
	})
}
