package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestTPCHWorkflow: tpch build, power and check on SQLite at SF 0.01, as a
// user runs them: each stores its result, `results show` renders the
// stored tests with their figures and labels, a second build without
// --drop is refused with the schema's exit code, tests on a database
// without the schema are refused the same way, and a TPC-C schema's
// tables are never taken for TPC-H's.
func TestTPCHWorkflow(t *testing.T) {
	testenv.Require(t, testenv.Subprocess, testenv.Long)
	env := storeEnv(t)
	target := "sqlite:" + filepath.Join(t.TempDir(), "h.db")

	r := oltplab(t, env, "tpch", "power", "--target", target)
	if r.code != exitSchema || !strings.Contains(r.err, "no oltplab TPC-H schema") {
		t.Fatalf("power without a schema: exit %d, %q", r.code, r.err)
	}
	r = oltplab(t, env, "tpch", "build", "--target", target, "--scale", "0.01")
	if r.code != 0 || !strings.Contains(r.out, "built TPC-H SF 0.01") || !strings.Contains(r.out, "stored as run") {
		t.Fatalf("build: exit %d\n%s%s", r.code, r.out, r.err)
	}
	r = oltplab(t, env, "tpch", "build", "--target", target, "--scale", "0.01")
	if r.code != exitSchema || !strings.Contains(r.err, "--drop") {
		t.Errorf("second build without --drop: exit %d, %q", r.code, r.err)
	}

	r = oltplab(t, env, "tpch", "power", "--target", target, "--seed", "4242", "--label", "sf001", "--json")
	if r.code != 0 {
		t.Fatalf("power: exit %d\n%s", r.code, r.err)
	}
	var got struct {
		RunID  int64 `json:"run_id"`
		Result struct {
			Seed  int64 `json:"seed"`
			Power struct {
				Power *float64 `json:"power_at_size"`
			} `json:"power"`
			Monitor json.RawMessage `json:"monitor"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("power --json: %v\n%s", err, r.out)
	}
	if got.RunID == 0 || got.Result.Seed != 4242 || got.Result.Power.Power == nil || len(got.Result.Monitor) < 10 {
		t.Fatalf("power --json: run %d seed %d Power@Size %v monitor %s", got.RunID, got.Result.Seed, got.Result.Power.Power, got.Result.Monitor)
	}

	r = oltplab(t, env, "results", "show", strings.TrimSpace(jsonNumber(got.RunID)))
	for _, want := range []string{"tpch, ok", "TPROC-H SF 0.01 power test: Power@Size", "not an audited TPC-H result", "geo. mean", "Q22", "RF1", "label    sf001"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("results show lacks %q:\n%s", want, r.out)
		}
	}
	r = oltplab(t, env, "results", "list")
	if !regexp.MustCompile(`tpch-build`).MatchString(r.out) || !strings.Contains(r.out, "Power@Size") {
		t.Errorf("results list lacks the build or the tests' headline:\n%s", r.out)
	}

	// A second power test with another seed compares with the first:
	// figures, each query's interval with its ratio, and what differs.
	r = oltplab(t, env, "tpch", "power", "--target", target, "--seed", "4243", "--label", "sf001b", "--json")
	var second struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.out), &second); r.code != 0 || err != nil || second.RunID == 0 {
		t.Fatalf("second power: exit %d, %v\n%s", r.code, err, r.err)
	}
	r = oltplab(t, env, "compare", "sf001", "sf001b")
	for _, want := range []string{"not an audited TPC-H result", "Power@Size", "sf001b/sf001", "Q22", "RF2", "geo. mean", "what differs between them"} {
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Errorf("compare of two TPC-H results: exit %d, output lacks %q:\n%s%s", r.code, want, r.out, r.err)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+seed\s+4242\s+4243\s*$`).MatchString(r.out) || regexp.MustCompile(`(?m)^\s+scale factor`).MatchString(r.out) {
		t.Errorf("compare: want the seeds as the difference and not the scale factor:\n%s", r.out)
	}
	r = oltplab(t, env, "compare", "sf001", jsonNumber(second.RunID), "--format", "json")
	var cmp struct {
		Runs []struct {
			ID int64 `json:"run_id"`
		} `json:"runs"`
		Tables []struct {
			Title string     `json:"title"`
			Rows  [][]string `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(r.out), &cmp); err != nil || r.code != 0 || len(cmp.Runs) != 2 || len(cmp.Tables) < 3 {
		t.Fatalf("compare --format json: exit %d, %v, %d runs, %d tables\n%s", r.code, err, len(cmp.Runs), len(cmp.Tables), r.out)
	}
	if cmp.Runs[0].ID != got.RunID {
		t.Errorf("compare json: first run %d, want %d (sf001)", cmp.Runs[0].ID, got.RunID)
	}
	// Each query's ratio is the second interval over the first.
	for _, row := range cmp.Tables[1].Rows[:22] {
		var a, b float64
		if _, err := fmt.Sscan(row[1]+" "+row[2], &a, &b); err != nil || len(row) != 4 || row[3] != fmt.Sprintf("%.2fx", b/a) {
			t.Errorf("power table row %q: want two intervals and their ratio (%v)", row, err)
		}
	}
	if r = oltplab(t, env, "compare", "sf001", "sf001b", "--format", "md"); r.code != 0 || !strings.Contains(r.out, "| Q1 | ") {
		t.Errorf("compare --format md: exit %d\n%s", r.code, r.out)
	}
	// A performance test against a power test: the throughput figures
	// and streams of the one, "-" for the other, and the tests differ.
	if r = oltplab(t, env, "tpch", "run", "--target", target, "--streams", "1", "--seed", "4244", "--label", "sf001c"); r.code != 0 {
		t.Fatalf("tpch run: exit %d\n%s", r.code, r.err)
	}
	r = oltplab(t, env, "compare", "sf001", "sf001c")
	for _, re := range []string{`(?m)^\s+Throughput@Size\s+-\s+[0-9.]+\s+-\s*$`, `(?m)^\s+stream 1 geo. mean\s+-\s+[0-9.]+\s+-\s*$`,
		`(?m)^\s+QphH@Size\s+-\s+[0-9.]+\s+-\s*$`, `(?m)^\s+test\s+power test\s+performance test\s*$`} {
		if r.code != 0 || !regexp.MustCompile(re).MatchString(r.out) {
			t.Errorf("compare of a power and a performance test: exit %d, no line matching %s:\n%s", r.code, re, r.out)
		}
	}

	// The standalone report of TPC-H results: the experiment report's
	// TPC-H part, each result a column, in HTML and Markdown.
	html := filepath.Join(t.TempDir(), "tpch.html")
	if r = oltplab(t, env, "report", "sf001", "sf001c", "-o", html); r.code != 0 {
		t.Fatalf("report of TPC-H results: exit %d\n%s", r.code, r.err)
	}
	page, _ := os.ReadFile(html)
	for _, want := range []string{"TPROC-H results", "TPROC-H figures at SF 0.01", "Power test: each query&#39;s interval (s)",
		"Throughput test, stream 1: each query&#39;s interval", "sf001c QphH@Size"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML report of TPC-H results lacks %q", want)
		}
	}
	if strings.Contains(string(page), "NOPM") {
		t.Errorf("HTML report of TPC-H results speaks of NOPM (the profiles' part)")
	}
	r = oltplab(t, env, "report", "sf001", "sf001b", "--format", "md")
	if r.code != 0 || !strings.Contains(r.out, "## TPROC-H results") || !regexp.MustCompile(`(?m)^\| Q22 \| [0-9.]+ \| [0-9.]+ \| ×[0-9.]+ \|$`).MatchString(r.out) {
		t.Errorf("Markdown report of TPC-H results: exit %d\n%s%s", r.code, r.out, r.err)
	}

	r = oltplab(t, env, "tpch", "check", "--target", target)
	if r.code != 0 || !strings.Contains(r.out, "lineitem (l_orderkey) → orders") || strings.Contains(r.out, "FAIL") {
		t.Errorf("check: exit %d\n%s%s", r.code, r.out, r.err)
	}

	// A TPC-C database is not a TPC-H one, and its tables are left alone.
	tpcc, _ := builtSQLite(t)
	r = oltplab(t, env, "tpch", "build", "--target", tpcc, "--scale", "0.01", "--drop")
	if r.code != exitSchema || !strings.Contains(r.err, "TPC-C") {
		t.Errorf("TPC-H build over TPC-C: exit %d, %q", r.code, r.err)
	}
	if r = oltplab(t, env, "check", "--target", tpcc); r.code != 0 {
		t.Errorf("TPC-C check after the refused TPC-H build: exit %d %s", r.code, r.err)
	}
	// A TPC-C profile does not compare with a TPC-H result.
	if r = oltplab(t, env, "run", "--target", tpcc, "--vus", "1", "--rampup", "0s", "--duration", "1s", "--label", "c"); r.code != 0 {
		t.Fatalf("TPC-C run: exit %d %s", r.code, r.err)
	}
	for _, args := range [][]string{{"compare", "sf001", "c"}, {"compare", "c", "sf001b"}, {"report", "sf001", "c"}} {
		r = oltplab(t, env, args...)
		if r.code != exitUsage || !strings.Contains(r.err, "TPC-H result") || !strings.Contains(r.err, "TPC-C profile") || strings.Count(strings.TrimSpace(r.err), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want a one-line usage error", args, r.code, r.err)
		}
	}
	if r = oltplab(t, env, "compare", "sf001", "nosuch"); r.code != exitUsage || !strings.Contains(r.err, `"nosuch"`) {
		t.Errorf("compare with an unknown name: exit %d, %q", r.code, r.err)
	}

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"tpch"}, exitUsage},
		{[]string{"tpch", "bogus"}, exitUsage},
		{[]string{"tpch", "build", "--target", target, "--scale", "0.001"}, exitUsage},
		{[]string{"tpch", "build", "--target", target, "--scale", "x"}, exitUsage},
		{[]string{"tpch", "throughput", "--target", target, "--streams", "0"}, exitUsage},
		{[]string{"tpch", "power", "--target", target, "--seed", "-1"}, exitUsage},
	} {
		if r := oltplab(t, env, c.args...); r.code != c.code || strings.Count(strings.TrimSpace(r.err), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d; stderr %q", c.args, r.code, c.code, r.err)
		}
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
