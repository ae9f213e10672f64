package store

import (
	"context"
	"errors"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestPostgresDDL: the migrations as PostgreSQL runs them, for review
// (testdata/postgres-schema.sql.golden; refresh with -update).
func TestPostgresDDL(t *testing.T) {
	var b strings.Builder
	ddl := postgresBackend{}.ddl
	b.WriteString("-- schema_migrations\n" + ddl(schemaMigrationsDDL) + ";\n")
	for _, m := range migrations {
		b.WriteString("\n-- migration " + strconv.Itoa(m.version) + ": " + m.name + "\n")
		for _, stmt := range m.stmts {
			b.WriteString(ddl(stmt) + ";\n")
		}
	}
	got := b.String()
	for _, word := range []string{"INTEGER", "BLOB", " REAL", "WITHOUT ROWID"} {
		if strings.Contains(got, word) {
			t.Errorf("PostgreSQL DDL still says %s", word)
		}
	}
	path := filepath.Join("testdata", "postgres-schema.sql.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("PostgreSQL DDL differs from %s (run with -update after checking it):\n%s", path, got)
	}
}

// adminExec runs statements on the private PostgreSQL server as its admin.
func adminExec(t *testing.T, db string, stmts ...string) {
	t.Helper()
	admin, err := url.Parse(os.Getenv("OLTPLAB_TEST_POSTGRES"))
	if err != nil {
		t.Fatal("OLTPLAB_TEST_POSTGRES is not a URL")
	}
	if db != "" {
		admin.Path = "/" + db
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		t.Fatalf("connect as admin: %v", err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestPostgresRefusesOtherSchemas: a schema holding another program's
// tables, or a store written by a newer oltplab, is refused and left
// exactly as it was.
func TestPostgresRefusesOtherSchemas(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup []string
		want  error
	}{
		{"a TPC-C database", []string{`CREATE TABLE warehouse (w_id integer PRIMARY KEY)`}, ErrNotStore},
		{"another program's migrations", []string{`CREATE TABLE schema_migrations (version bigint PRIMARY KEY)`}, ErrNotStore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := dbtest.Postgres(t)
			adminExec(t, tg.URL.Path[1:], c.setup...)
			_, err := Open(ctx, dbtest.RawURL(tg))
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: got %v, want %v", err, c.want)
			}
			if n := tableCount(t, dbtest.RawURL(tg)); n != 1 {
				t.Errorf("the refused schema has %d tables, want its 1", n)
			}
		})
	}
	t.Run("a newer schema", func(t *testing.T) {
		loc := postgresLocation(t)
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateRun(ctx, Run{Kind: KindBuild, Label: "kept"}); err != nil {
			t.Fatal(err)
		}
		newer := SchemaVersion() + 7
		if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, '2030-01-01T00:00:00Z')`, newer); err != nil {
			t.Fatal(err)
		}
		s.Close()
		before := tableCount(t, loc)
		if _, err := Open(ctx, loc); !errors.Is(err, ErrNewerSchema) {
			t.Fatalf("Open: got %v, want ErrNewerSchema", err)
		}
		if _, err := OpenToRead(ctx, loc); !errors.Is(err, ErrNewerSchema) {
			t.Fatalf("OpenToRead: got %v, want ErrNewerSchema", err)
		}
		if after := tableCount(t, loc); after != before {
			t.Errorf("tables: %d before, %d after the refusal", before, after)
		}
	})
}

func tableCount(t *testing.T, location string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresSearchPath: two stores live side by side in one database,
// each in its own schema (?search_path=NAME).
func TestPostgresSearchPath(t *testing.T) {
	ctx := context.Background()
	tg := dbtest.Postgres(t)
	adminExec(t, tg.URL.Path[1:], `CREATE TABLE public.warehouse (w_id integer)`, `CREATE SCHEMA team_a`, `CREATE SCHEMA team_b`)
	for _, schema := range []string{"team_a", "team_b"} {
		u, _ := url.Parse(dbtest.RawURL(tg))
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		s := openTestAt(t, u.String())
		if _, err := s.CreateRun(ctx, Run{Kind: KindCheck, Label: schema}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.ListRuns(ctx, RunFilter{})
		if err != nil || len(runs) != 1 || runs[0].Label != schema {
			t.Errorf("store in %s: runs %+v (%v), want its one run", schema, runs, err)
		}
	}
}

// TestPostgresPasswordNeverShown: the password of the store's URL is in
// no path, error or stored value.
func TestPostgresPasswordNeverShown(t *testing.T) {
	ctx := context.Background()
	tg := dbtest.Postgres(t)
	password := dbtest.Password(tg)
	if len(password) < 8 {
		t.Fatalf("the test server's password is too short to search for")
	}
	raw := dbtest.RawURL(tg)
	s := openTestAt(t, raw)
	if strings.Contains(s.Path(), password) || !strings.HasPrefix(s.Path(), "postgres://") {
		t.Errorf("Path() = %q: holds the password, or is not the URL", s.Path())
	}
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteRun(ctx, id, testOutcome(3)); err != nil {
		t.Fatal(err)
	}
	var dump string
	if err := s.db.QueryRowContext(ctx, `SELECT string_agg(r::text, ' ') FROM runs r`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, password) {
		t.Errorf("a stored run holds the password")
	}
	bad := func(edit func(u *url.URL)) string {
		u, _ := url.Parse(raw)
		edit(u)
		return u.String()
	}
	for name, loc := range map[string]string{
		"no such database": bad(func(u *url.URL) { u.Path = "/no_such_db" }),
		"wrong password":   bad(func(u *url.URL) { u.User = url.UserPassword(u.User.Username(), password+"x") }),
		"nobody listening": bad(func(u *url.URL) { u.Host = "127.0.0.1:1" }),
		"password in the query": bad(func(u *url.URL) {
			u.User = url.User(u.User.Username())
			u.Path = "/no_such_db"
			u.RawQuery = "password=" + password + "&sslmode=disable"
		}),
		"not a URL": "postgres://user:" + password + "@host:port:bad/db",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(ctx, loc)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestPostgresCompleteDurablyRetriesALostServer: the server stops taking
// the store's connections when a run ends (its connections are ended and
// new ones refused). The result is saved to a file at once, the user is
// told, and once the server takes connections again the run is stored
// and the file removed.
func TestPostgresCompleteDurablyRetriesALostServer(t *testing.T) {
	ctx := context.Background()
	tg := dbtest.Postgres(t)
	db := tg.URL.Path[1:]
	role, password := db+"_w", "pw-"+db
	adminExec(t, "", `CREATE ROLE `+role+` LOGIN PASSWORD '`+password+`'`, `ALTER DATABASE `+db+` OWNER TO `+role)
	t.Cleanup(func() {
		adminExec(t, "", `DROP DATABASE IF EXISTS `+db+` WITH (FORCE)`, `DROP ROLE IF EXISTS `+role)
	})
	u, _ := url.Parse(dbtest.RawURL(tg))
	u.User = url.UserPassword(role, password)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	s := openTestAt(t, u.String())
	id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	adminExec(t, "", `ALTER ROLE `+role+` CONNECTION LIMIT 0`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '`+role+`'`)

	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	back := false
	clock.onSleep = func(now time.Time) {
		if len(savedFiles(t, s)) != 1 {
			t.Errorf("while waiting: saved files %v, want one", savedFiles(t, s))
		}
		if !back && now.Sub(start) > 30*time.Second {
			adminExec(t, "", `ALTER ROLE `+role+` CONNECTION LIMIT -1`)
			back = true
		}
	}
	var notes []string
	err = s.CompleteDurably(ctx, id, testOutcome(10), Durability{
		MaxWait: time.Minute, Now: clock.Now, Sleep: clock.Sleep, Notify: func(m string) { notes = append(notes, m) },
	})
	if err != nil {
		t.Fatalf("CompleteDurably: %v", err)
	}
	if !back {
		t.Fatalf("stored while the server refused connections")
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "cannot be reached") {
		t.Errorf("user not told about the wait: %q", notes)
	}
	for _, n := range notes {
		if strings.Contains(n, password) {
			t.Errorf("a message shows the password: %q", n)
		}
	}
	if f := savedFiles(t, s); len(f) != 0 {
		t.Errorf("saved file left behind after storing: %v", f)
	}
	storedRun(t, s, id, 10)
}
