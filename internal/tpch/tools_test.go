package tpch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

// toolsDir is a directory holding dbgen, qgen, dists.dss and qgen's query
// templates, built from the TPC-H Tools the TPC distributes. Nothing else
// generates update sets or qgen's parameters, so the tests that compare
// with them run only where someone built the tools.
func toolsDir(t *testing.T) string {
	testenv.Require(t, testenv.Subprocess)
	dir := os.Getenv("OLTPLAB_TPCH_TOOLS")
	if dir == "" {
		t.Skip("OLTPLAB_TPCH_TOOLS not set: point it at a directory with dbgen, qgen and dists.dss built from the TPC-H Tools")
	}
	return dir
}

// tblLines returns a dbgen file's lines without dbgen's trailing separator.
func tblLines(b []byte) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		out.WriteString(strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "|") + "\n")
	}
	return out.String()
}

// TestToolsUpdateSets compares update sets 1..3 with dbgen -U's files.
func TestToolsUpdateSets(t *testing.T) {
	tools := toolsDir(t)
	for _, sf := range []string{"0.01", "0.1", "1"} {
		dir := t.TempDir()
		cmd := exec.Command(filepath.Join(tools, "dbgen"), "-f", "-q", "-s", sf, "-U", "3", "-b", filepath.Join(tools, "dists.dss"))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dbgen -U: %v\n%s", err, out)
		}
		s, _ := ParseScale(sf)
		g := NewGenerator(s)
		for u := 1; u <= 3; u++ {
			var orders, lines, deletes []byte
			if err := g.RefreshInserts(u, func(r Row) error {
				if r.Table() == Orders {
					orders = r.AppendTBL(orders)
				} else {
					lines = r.AppendTBL(lines)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			keys, _ := s.RefreshDeletes(u)
			for _, k := range keys {
				deletes = strconv.AppendInt(deletes, k, 10)
				deletes = append(deletes, '\n')
			}
			for name, got := range map[string][]byte{"orders.tbl.u": orders, "lineitem.tbl.u": lines, "delete.": deletes} {
				want, err := os.ReadFile(filepath.Join(dir, name+strconv.Itoa(u)))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tblLines(want) {
					t.Errorf("SF %s: %s%d differs from dbgen's", sf, name, u)
				}
			}
		}
	}
}

// TestToolsQGen compares the parameters of all 22 queries with those
// qgen -r logs, for several seeds.
func TestToolsQGen(t *testing.T) {
	tools := toolsDir(t)
	s, _ := ParseScale("0.1")
	for _, seed := range []int64{1, 12345, 987654321, 2147483646} {
		log := filepath.Join(t.TempDir(), "params")
		cmd := exec.Command(filepath.Join(tools, "qgen"), "-r", strconv.FormatInt(seed, 10), "-s", "0.1", "-l", log,
			"-b", filepath.Join(tools, "dists.dss"))
		cmd.Env = append(os.Environ(), "DSS_QUERY="+filepath.Join(tools, "queries"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("qgen: %v\n%s", err, out)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := NewQGen(seed, s)
		for i, line := range strings.Split(string(bytes.TrimSpace(b)), "\n") {
			p, _ := g.Params(i + 1)
			if got := strconv.Itoa(i+1) + "\t" + strings.Join(p.Values, "\t"); got != line {
				t.Errorf("seed %d Q%d: %q, qgen %q", seed, i+1, got, line)
			}
		}
	}
}
