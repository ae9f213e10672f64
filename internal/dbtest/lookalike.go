package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

// What a user may keep at the name oltplab gives the baseline copy of a
// database (`run --reset-between`, `oltplab clean`): <db>_oltplab_base on
// a server, <file>.oltplab-base beside a SQLite file. A test plants one,
// lets oltplab at it, and checks that it is still there, unchanged.

// LookAlike plants one such thing for the database of tg. Plant returns
// intact, which says what changed (nil: nothing), and remove, which takes
// it away (it also goes when the test ends).
type LookAlike struct {
	Name  string
	Plant func(t testing.TB, tg dialect.Target) (intact func() error, remove func())
}

// Look-alikes per engine.
var (
	// PostgresLookAlikes: a database of the baseline's name holding a table.
	PostgresLookAlikes = []LookAlike{{"a database with a table", plantPostgresDatabase}}
	// MySQLLookAlikes: a schema of the baseline's name holding a table, and
	// one holding a copy of the database's metadata (a user's backup).
	MySQLLookAlikes = []LookAlike{{"a database with a table", plantMySQLDatabase(false)},
		{"a copy of the database", plantMySQLDatabase(true)}}
	// SQLiteLookAlikes: a file of the baseline's name, a copy of the
	// database file (a user's backup), and a symbolic link to a file
	// elsewhere.
	SQLiteLookAlikes = []LookAlike{{"a file", plantSQLiteFile(false)}, {"a copy of the database", plantSQLiteFile(true)},
		{"a symbolic link", plantSQLiteLink}}
)

// baselineName is the name oltplab gives the baseline copy of tg's database.
func baselineName(tg dialect.Target) string {
	if tg.Scheme == "sqlite" {
		return tg.URL.Path + ".oltplab-base"
	}
	return tg.URL.Path[1:] + "_oltplab_base"
}

// BaselineExists reports whether anything is at the name of the baseline
// copy of tg's database.
func BaselineExists(t testing.TB, tg dialect.Target) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := baselineName(tg)
	var n int
	switch tg.Scheme {
	case "sqlite":
		_, err := os.Lstat(name)
		return err == nil
	case "postgres":
		c := connectPostgres(t, tg, "postgres")
		defer c.Close(ctx)
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			t.Fatalf("look for database %s: %v", name, err)
		}
	case "mysql":
		db := openMySQLAdmin(t, RawURL(tg))
		defer db.Close()
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&n); err != nil {
			t.Fatalf("look for schema %s: %v", name, err)
		}
	default:
		t.Fatalf("no baseline for scheme %s", tg.Scheme)
	}
	return n > 0
}

func connectPostgres(t testing.TB, tg dialect.Target, db string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, withPath(RawURL(tg), "/"+db))
	if err != nil {
		t.Fatalf("connect to database %s: %v", db, err)
	}
	return c
}

func plantPostgresDatabase(t testing.TB, tg dialect.Target) (func() error, func()) {
	t.Helper()
	ctx := context.Background()
	name := baselineName(tg)
	admin := connectPostgres(t, tg, "postgres")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	admin.Close(ctx)
	c := connectPostgres(t, tg, name)
	if _, err := c.Exec(ctx, "CREATE TABLE mine (v text); INSERT INTO mine VALUES ('my rows')"); err != nil {
		t.Fatalf("create a table in %s: %v", name, err)
	}
	c.Close(ctx)
	intact := func() error {
		c, err := pgx.Connect(ctx, withPath(RawURL(tg), "/"+name))
		if err != nil {
			return fmt.Errorf("connect to %s: %w", name, err)
		}
		defer c.Close(ctx)
		var v string
		if err := c.QueryRow(ctx, "SELECT v FROM mine").Scan(&v); err != nil || v != "my rows" {
			return fmt.Errorf("table mine of %s: got %q, %v", name, v, err)
		}
		return nil
	}
	remove := func() {
		c := connectPostgres(t, tg, "postgres")
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	}
	t.Cleanup(remove)
	return intact, remove
}

func plantMySQLDatabase(copyMeta bool) func(testing.TB, dialect.Target) (func() error, func()) {
	return func(t testing.TB, tg dialect.Target) (func() error, func()) {
		t.Helper()
		ctx := context.Background()
		name, src := baselineName(tg), tg.URL.Path[1:]
		db := openMySQLAdmin(t, RawURL(tg))
		stmts := []string{"CREATE DATABASE " + name, "CREATE TABLE " + name + ".mine (v VARCHAR(20))",
			"INSERT INTO " + name + ".mine VALUES ('my rows')"}
		if copyMeta {
			stmts = append(stmts, "CREATE TABLE "+name+".oltplab_meta LIKE "+src+".oltplab_meta",
				"INSERT INTO "+name+".oltplab_meta SELECT * FROM "+src+".oltplab_meta")
		}
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		intact := func() error {
			var v string
			if err := db.QueryRowContext(ctx, "SELECT v FROM "+name+".mine").Scan(&v); err != nil || v != "my rows" {
				return fmt.Errorf("table mine of %s: got %q, %v", name, v, err)
			}
			return nil
		}
		remove := func() {
			if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil && !errors.Is(err, sql.ErrConnDone) {
				t.Errorf("drop %s: %v", name, err)
			}
		}
		t.Cleanup(func() { remove(); db.Close() })
		return intact, remove
	}
}

func plantSQLiteFile(copyDB bool) func(testing.TB, dialect.Target) (func() error, func()) {
	return func(t testing.TB, tg dialect.Target) (func() error, func()) {
		t.Helper()
		name := baselineName(tg)
		want := []byte("my own notes, not oltplab's\n")
		if copyDB {
			b, err := os.ReadFile(tg.URL.Path)
			if err != nil {
				t.Fatalf("copy the database file: %v", err)
			}
			want = b
		}
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		intact := func() error {
			fi, err := os.Lstat(name)
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is no longer a regular file: %s", name, fi.Mode())
			}
			if got, err := os.ReadFile(name); err != nil || string(got) != string(want) {
				return fmt.Errorf("%s changed (%d bytes, want %d; %v)", name, len(got), len(want), err)
			}
			return nil
		}
		remove := func() {
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Error(err)
			}
		}
		t.Cleanup(remove)
		return intact, remove
	}
}

// plantSQLiteLink links the baseline's name to a file of the user's in
// another directory.
func plantSQLiteLink(t testing.TB, tg dialect.Target) (func() error, func()) {
	t.Helper()
	name := baselineName(tg)
	victim := filepath.Join(t.TempDir(), "precious")
	const content = "a file the link points to\n"
	if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, name); err != nil {
		t.Fatal(err)
	}
	intact := func() error {
		if got, err := os.Readlink(name); err != nil || got != victim {
			return fmt.Errorf("link %s: got %q, %v; want it to point to %s", name, got, err, victim)
		}
		fi, err := os.Stat(victim)
		if err != nil {
			return err
		}
		if got, err := os.ReadFile(victim); err != nil || string(got) != content || fi.Mode().Perm() != 0o600 {
			return fmt.Errorf("%s changed: %q, mode %s, %v", victim, got, fi.Mode(), err)
		}
		return nil
	}
	remove := func() {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Error(err)
		}
	}
	t.Cleanup(remove)
	return intact, remove
}
