package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestTargetPath(t *testing.T) {
	tests := []struct {
		raw, want string
		wantErr   bool
	}{
		{raw: "sqlite:./tpcc.db", want: "./tpcc.db"},
		{raw: "sqlite:tpcc.db", want: "tpcc.db"},
		{raw: "sqlite:/abs/path.db", want: "/abs/path.db"},
		{raw: "sqlite:///abs/path.db", want: "/abs/path.db"},
		{raw: "sqlite:my%20db.db", want: "my db.db"},
		{raw: "sqlite://host/x.db", wantErr: true},
		{raw: "sqlite:x.db?cache=shared", wantErr: true},
		{raw: "sqlite:x.db?cache_size=-65536", want: "x.db"},
		{raw: "sqlite:x.db?cache_size=lots", wantErr: true},
		{raw: "sqlite:x.db?cache_size=1&cache_size=2", wantErr: true},
		{raw: "sqlite:", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			tg, err := dialect.ParseTarget(tt.raw, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := targetPath(tg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error: got %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestURIPath(t *testing.T) {
	if got, want := uriPath("/a b/x%?#.db"), "/a b/x%25%3F%23.db"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestMissingFile: run and check on a wrong path fail with "no such
// database file" (ClassUndefinedObject) and never create the file.
func TestMissingFile(t *testing.T) {
	tg := dbtest.SQLite(t)
	path, _ := targetPath(tg)
	ctx := context.Background()
	d, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	ops := []struct {
		name string
		do   func() error
	}{
		{"Connect", func() error { _, err := d.Connect(ctx); return err }},
		{"NewSession", func() error { _, err := d.NewSession(ctx, dialect.StyleClientSQL); return err }},
		{"Snapshot", func() error { return d.Snapshot(ctx, func(tpcc.Querier) error { return nil }) }},
		{"NewLoader", func() error { _, err := d.NewLoader(ctx); return err }},
		{"CreateIndexes", func() error { return d.CreateIndexes(ctx) }},
		{"Analyze", func() error { return d.Analyze(ctx) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			err := op.do()
			if got, want := dialect.ClassOf(err), dialect.ClassUndefinedObject; got != want {
				t.Errorf("class of %v: got %v, want %v", err, got, want)
			}
			if got, want := d.Classify(err), dialect.ClassUndefinedObject; got != want {
				t.Errorf("Classify: got %v, want %v", got, want)
			}
			if err != nil && !strings.Contains(err.Error(), "no such database file") {
				t.Errorf("error %q does not say %q", err, "no such database file")
			}
		})
	}
	// build asks HasTable before it creates the file; DropSchema of nothing is a no-op.
	if ok, err := d.HasTable(ctx, "warehouse"); ok || err != nil {
		t.Errorf("HasTable: got %v, %v; want false, nil", ok, err)
	}
	if err := d.DropSchema(ctx); err != nil {
		t.Errorf("DropSchema: %v", err)
	}
	if v, err := d.Version(ctx); err != nil || !strings.HasPrefix(v, "SQLite 3.") {
		t.Errorf("Version: got %q, %v; want SQLite 3.x", v, err)
	}
	if _, err := d.Settings(ctx); err != nil {
		t.Errorf("Settings: %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: got %v, want it not to exist", p, err)
		}
	}
	// CreateTables (build) creates it.
	if err := d.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	names := []string{tpcc.MetaTable}
	for _, tb := range tpcc.Tables {
		names = append(names, tb.String())
	}
	for _, name := range names {
		if ok, err := d.HasTable(ctx, name); !ok || err != nil {
			t.Errorf("HasTable(%s) after CreateTables: got %v, %v", name, ok, err)
		}
	}
	if err := d.DropSchema(ctx); err != nil {
		t.Fatalf("DropSchema: %v", err)
	}
	if ok, err := d.HasTable(ctx, "warehouse"); ok || err != nil {
		t.Errorf("HasTable after DropSchema: got %v, %v; want false, nil", ok, err)
	}
}

func TestOpenRefusesMissingDirectory(t *testing.T) {
	raw := "sqlite:" + filepath.Join(t.TempDir(), "no-such-dir", "tpcc.db")
	tg, err := dialect.ParseTarget(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), tg)
	if err == nil {
		t.Fatal("Open: got nil error for a missing directory")
	}
	if !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("error %q does not say the directory does not exist", err)
	}
}

func TestNotADatabase(t *testing.T) {
	tg := dbtest.SQLite(t)
	path, _ := targetPath(tg)
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.HasTable(ctx, "warehouse")
	if got, want := dialect.ClassOf(err), dialect.ClassOther; got != want {
		t.Errorf("class of %v: got %v, want %v", err, got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("error %v does not say the file is not an SQLite database", err)
	}
}

func TestClassify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		err  error
		want dialect.ErrClass
	}{
		{"nil", nil, dialect.ClassNone},
		{"rollback", fmt.Errorf("new-order: %w", tpcc.ErrRollback), dialect.ClassRollback},
		{"canceled", fmt.Errorf("payment: %w", ctx.Err()), dialect.ClassCanceled},
		{"deadline", context.DeadlineExceeded, dialect.ClassCanceled},
		{"classified", &dialect.Error{Class: dialect.ClassAuth, Op: "x", Err: errors.New("y")}, dialect.ClassAuth},
		{"plain", errors.New("boom"), dialect.ClassOther},
		{"url error", &url.Error{Op: "x", URL: "y", Err: errors.New("z")}, dialect.ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVersionAndSettings(t *testing.T) {
	d := openBuilt(t)
	ctx := context.Background()
	v, err := d.Version(ctx)
	if err != nil || !strings.HasPrefix(v, "SQLite 3.") {
		t.Errorf("Version: got %q, %v", v, err)
	}
	m, err := d.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"journal_mode": "wal", "synchronous": "normal", "busy_timeout": "30000", "foreign_keys": "0", "file": d.path}
	for k, w := range want {
		if m[k] != w {
			t.Errorf("Settings[%s]: got %q, want %q", k, m[k], w)
		}
	}
	if m["file_size_bytes"] == "" || m["file_size_bytes"] == "0" {
		t.Errorf("Settings[file_size_bytes]: got %q", m["file_size_bytes"])
	}
	if d.Name() != "sqlite" {
		t.Errorf("Name: got %q, want sqlite", d.Name())
	}
	found := false
	for _, s := range dialect.Schemes() {
		found = found || s == "sqlite"
	}
	if !found {
		t.Errorf("scheme sqlite not registered: %v", dialect.Schemes())
	}
}

// TestCacheSizeParameter: sqlite:PATH?cache_size=N gives every run
// connection that page cache and turns mmap off (managed instances pass
// their memory so); without it the run connections use mmap.
func TestCacheSizeParameter(t *testing.T) {
	src, _ := builtTemplate(t)
	ctx := context.Background()
	for _, tt := range []struct {
		query           string
		wantCache, mmap string
	}{
		{"?cache_size=-4096", "-4096", "0"},
		{"", "-2000", fmt.Sprint(mmapBytes)},
	} {
		t.Run("query="+tt.query, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tpcc.db")
			copyFile(t, src, path)
			tg, err := dialect.ParseTarget("sqlite:"+path+tt.query, "")
			if err != nil {
				t.Fatal(err)
			}
			d, err := Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			m, err := d.Settings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m["cache_size"] != tt.wantCache || m["mmap_size"] != tt.mmap {
				t.Errorf("cache_size, mmap_size: got %s, %s; want %s, %s", m["cache_size"], m["mmap_size"], tt.wantCache, tt.mmap)
			}
		})
	}
}
