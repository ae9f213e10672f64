// Package tpchref gives tests reference TPC-H data and answers from
// implementations independent of oltplab: scripts/tpchref.sh installs
// tpchgen-cli (dbgen's rows byte for byte) and DuckDB with its tpch
// extension from PyPI into a private virtual environment and runs them.
//
// Without Python or the packages a test skips or fails as
// testenv.Require decides (testenv.Python).
//
// Only _test.go files import this package. It imports testenv only.
package tpchref

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

// script finds scripts/tpchref.sh above the test's directory.
func script(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "tpchref.sh")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("tpchref: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// run runs the script and returns its standard output.
func run(t testing.TB, args ...string) []byte {
	t.Helper()
	testenv.Require(t, testenv.Python)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(script(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		testenv.Unavailable(t, testenv.Python, "reference TPC-H implementations unavailable (scripts/tpchref.sh needs python3 with venv and PyPI): "+
			string(bytes.TrimSpace(stderr.Bytes())))
	}
	if err != nil {
		t.Fatalf("scripts/tpchref.sh %v: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// Tables writes dbgen's flat files of scale factor sf (tpchgen-cli's, one
// <table>.tbl per table, each line ending in '|' as dbgen writes it) into
// a temporary directory and returns it.
func Tables(t testing.TB, sf string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, "tbl", sf, dir)
	return dir
}

// DuckDBTable is what DuckDB's dbgen generated of one table.
type DuckDBTable struct {
	Rows int64 `json:"rows"`
	// Sum is the Checksum of Columns, the columns DuckDB generates as
	// dbgen does (all but comments and addresses).
	Sum     string   `json:"sum"`
	Columns []string `json:"columns"`
	// First and Last are the range of the table's row numbers (from 1;
	// orders and line items by their order's number).
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// DuckDBSums generates scale factor sf with DuckDB's dbgen, whole
// (children 1) or its chunk step (from 0) of children, and returns per
// table name its rows and checksum.
func DuckDBSums(t testing.TB, sf string, children, step int) map[string]DuckDBTable {
	t.Helper()
	out := run(t, "duckdb-sums", sf, strconv.Itoa(children), strconv.Itoa(step))
	var m map[string]DuckDBTable
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("tpchref duckdb-sums: %v", err)
	}
	return m
}

// Answers returns the answers of the 22 queries with the validation
// parameters at scale factor sf: DuckDB runs its own query texts over
// tpchgen-cli's rows. Values are text, NULL is "NULL".
func Answers(t testing.TB, sf string) map[int][][]string {
	t.Helper()
	out := run(t, "answers", sf)
	var m map[string][][]string
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("tpchref answers: %v", err)
	}
	a := make(map[int][][]string, len(m))
	for k, v := range m {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatalf("tpchref answers: query %q", k)
		}
		a[n] = v
	}
	return a
}

// Checksum is the order-independent checksum of a table's rows: the
// first 8 bytes of each row's MD5, big-endian, summed modulo 2⁶⁴. A row
// is its columns in dbgen's flat-file form joined by '|', without the
// trailing separator or newline.
type Checksum struct {
	Rows int64
	Sum  uint64
}

// Add adds one row.
func (c *Checksum) Add(row []byte) {
	d := md5.Sum(row)
	c.Sum += binary.BigEndian.Uint64(d[:8])
	c.Rows++
}

// String is the sum in decimal, as DuckDBTable.Sum.
func (c Checksum) String() string { return strconv.FormatUint(c.Sum, 10) }
