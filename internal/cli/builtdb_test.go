package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// builtDB is a SQLite TPC-C database that `oltplab build` made once for
// this test binary; tests that need a built database (not the ones about
// the build) each get a copy of its file, as fresh as after the build: a
// build is seconds of CPU, a copy a fraction of one.
type builtDB struct {
	warehouses int
	once       sync.Once
	path       string
	err        error
}

var (
	// oneWarehouse is `oltplab build --target sqlite:FILE` with its
	// defaults: one warehouse.
	oneWarehouse = &builtDB{warehouses: 1}
	// shardDB is four warehouses, for the shard tests.
	shardDB = &builtDB{warehouses: 4}
)

// copyOf builds the database on first use and returns the path of a fresh
// copy of it in t's temporary directory, named tpcc.db. The build is not
// recorded in t's results store (it has a store of its own).
func (b *builtDB) copyOf(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", fmt.Sprintf("oltplab-cli-built-%dw-", b.warehouses))
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "tpcc.db")
		var out, errb strings.Builder
		if code := testMain(context.Background(), []string{"build", "--target", "sqlite:" + b.path, "--warehouses", fmt.Sprint(b.warehouses)},
			[]string{"OLTPLAB_RESULTS=" + filepath.Join(dir, "results.db"), "HOME=" + dir},
			Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
			b.err = fmt.Errorf("build of %d warehouse(s): exit %d: %s", b.warehouses, code, errb.String())
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	path := filepath.Join(t.TempDir(), "tpcc.db")
	src, err := os.Open(b.path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// remove removes the built database once every test ran.
func (b *builtDB) remove() {
	if b.path != "" {
		_ = os.RemoveAll(filepath.Dir(b.path))
	}
}

// builtSQLite returns the target of a fresh copy of a one-warehouse SQLite
// TPC-C database just as `oltplab build` left it, and its file.
func builtSQLite(t *testing.T) (target, file string) {
	t.Helper()
	file = oneWarehouse.copyOf(t)
	return "sqlite:" + file, file
}

// removeBuiltDBs removes the databases built for the tests.
func removeBuiltDBs() {
	oneWarehouse.remove()
	shardDB.remove()
}
