package internal_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowed is oltplab's import graph, the source of truth for its layering:
// for every package, the oltplab packages its non-test files import (under
// internal/, without the prefix). TestLayering fails on an import the
// table does not hold (a new arrow: add it here, where review sees it),
// on an arrow the table holds that no file uses any more, and on a
// package missing from it. Test files may import anything; the test-only
// packages (conformance, dbtest, testenv, tpchref) appear in no
// production package's list. docs/architecture.md draws this graph.
var allowed = map[string][]string{
	// The command line wires everything; only cmd/oltplab imports it.
	"cmd/oltplab": {"cli", "latency"},
	"cli": {"agent", "claim", "cost", "dialect", "dialect/mysql", "dialect/postgres", "dialect/sqlite",
		"dialect/sqlserver", "driver", "experiment", "fio", "instance", "k8s", "latency", "load", "metrics", "plan",
		"profile", "report", "results", "sampler", "scenario", "selftest", "site", "store", "summary", "tpcc",
		"tpch", "tpchdriver", "tpchload", "yamldoc"},

	// Experiments: the plan language below the step kinds that run it.
	"experiment": {"agent", "claim", "cost", "dialect", "driver", "fio", "instance", "latency", "load", "plan", "profile",
		"report", "results", "sampler", "scenario", "store", "summary", "sysstat", "tpcc", "tpch", "tpchdriver",
		"tpchload", "yamldoc"},
	"plan": {"cost", "dialect", "driver", "instance", "load", "profile", "store", "yamldoc"},

	// Reading and serving stored results.
	"site":    {"report", "results", "store"},
	"results": {"driver", "profile", "report", "sampler", "store", "summary", "sysstat"},

	// Measured procedures: every measurement goes to the store; never cli,
	// experiment or report.
	"scenario": {"agent", "claim", "dialect", "driver", "fio", "instance", "latency", "load", "profile",
		"sampler", "store", "summary", "sysstat", "tpcc", "tpchdriver", "tpchload"},
	"summary":  {"dialect", "driver", "profile", "sampler", "store", "sysstat", "tpcc", "tpch"},
	"selftest": {"dialect", "load", "tpcc"},
	"metrics":  {"driver", "tpcc"},
	"sampler":  {"agent", "dialect", "store", "sysstat"},

	// Workload: databases only through the dialect contract.
	"driver":     {"dialect", "tpcc"},
	"load":       {"dialect", "tpcc"},
	"tpchload":   {"dialect", "tpch"},
	"tpchdriver": {"dialect", "tpch", "tpchload"},

	// Dialects: the contract over the specifications, implemented by
	// packages that never import each other.
	"dialect":           {"tpcc", "tpch"},
	"dialect/mysql":     {"dialect", "placeholder", "rawconn", "tpcc", "tpch"},
	"dialect/postgres":  {"dialect", "placeholder", "rawconn", "tpcc", "tpch"},
	"dialect/sqlite":    {"dialect", "tpcc", "tpch"},
	"dialect/sqlserver": {"dialect", "placeholder", "rawconn", "tpcc"},

	// Managed instances and the host.
	"instance": {"claim", "dialect", "latency", "sysstat"},
	"latency":  {"claim"},
	"fio":      {"claim", "sysstat"},
	"agent":    {"claim", "dialect", "driver", "fio", "instance", "sysstat", "tpcc"},

	// Pure models and renderers: no store, no driver.
	"report":  {"cost", "profile"},
	"cost":    {"yamldoc"},
	"profile": {},

	// The store knows results, not how they were produced.
	"store": {"placeholder"},

	// Leaves: nothing of oltplab.
	"claim":       {},
	"k8s":         {},
	"ociimage":    {},
	"placeholder": {},
	"rawconn":     {},
	"sysstat":     {},
	"tpcc":        {},
	"tpch":        {},
	"yamldoc":     {},

	// Build tools: `make image` runs ociimage/mkimage; the oltplab
	// binary imports neither.
	"ociimage/mkimage": {"ociimage"},

	// Test-only packages: only _test.go files and other test-only
	// packages import them.
	"conformance": {"dialect", "driver", "load", "tpcc", "tpch", "tpchload", "tpchref"},
	"dbtest":      {"dialect", "instance", "testenv", "tpcc"},
	"testenv":     {},
	"tpchref":     {"testenv"},
}

// TestLayering checks every package's imports against allowed, naming
// the package, the import and the file.
func TestLayering(t *testing.T) {
	root, module := moduleRoot(t)
	got := map[string]map[string]string{} // package -> import -> a file importing it
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(root, path)
			pkg := strings.TrimPrefix(filepath.ToSlash(rel), "internal/")
			imports, found, err := packageImports(root, path, module)
			if err != nil {
				return err
			}
			if found {
				got[pkg] = imports
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) < 10 {
		t.Fatalf("found %d packages under %s: the walk is broken", len(got), root)
	}
	for _, pkg := range slices.Sorted(maps.Keys(got)) {
		want, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in the import table (internal/layering_test.go): add it with what it may import", pkg)
			continue
		}
		for _, imp := range slices.Sorted(maps.Keys(got[pkg])) {
			if !slices.Contains(want, imp) {
				t.Errorf("%s imports %s (%s): not an allowed import (internal/layering_test.go); "+
					"if the arrow is right, add it to the table, else take it out", pkg, imp, got[pkg][imp])
			}
		}
		for _, imp := range want {
			if _, ok := got[pkg][imp]; !ok {
				t.Errorf("%s no longer imports %s: take the arrow out of the import table (internal/layering_test.go)", pkg, imp)
			}
		}
	}
	for pkg := range allowed {
		if _, ok := got[pkg]; !ok {
			t.Errorf("the import table names %s, which has no Go files: take it out (internal/layering_test.go)", pkg)
		}
	}
}

// packageImports returns the oltplab imports of the non-test Go files in
// dir (relative to internal/, or cmd/...), each with a file importing it
// (relative to root), and whether dir holds any such file.
func packageImports(root, dir, module string) (map[string]string, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	out := map[string]string{}
	found := false
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		found = true
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			return nil, false, err
		}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return nil, false, err
			}
			rest, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			rest = strings.TrimPrefix(rest, "internal/")
			if _, seen := out[rest]; !seen {
				out[rest], _ = filepath.Rel(root, filepath.Join(dir, name))
			}
		}
	}
	return out, found, nil
}

// moduleRoot returns the directory holding go.mod and the module path.
func moduleRoot(t *testing.T) (string, string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
