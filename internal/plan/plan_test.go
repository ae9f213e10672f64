package plan_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The step kinds plans list, and the URL schemes of their targets.
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	_ "github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

const goodPlan = `# a comparison of two SQLite files and a matrix of managed instances
name: tiers
question: "  Which tier gives the most NOPM per dollar?  "
warehouses: 2
build:
  workers: 2
  drop: true
profile:
  vus: [1, 2, 4]
  rampup: 5s
  duration: 20s
  repeat: 2
  interleave: true
baseline: disk-256MB-none
targets:
  - name: file-a
    url: sqlite:a.db
  - name: file-b
    url: sqlite:/var/tmp/b.db
matrix:
  engine: postgres
  memory: 128MB
  settings: {synchronous_commit: "on"}
  axes:
    data_dir: [/dev/shm/oltplab, /var/tmp/disk]
    memory: [64MB, 256MB]
    io_limit:
      - {}
      - {name: hdd, value: {read_iops: 200, write_iops: 150}}
  name: "{data_dir}-{memory}-{io_limit}"
steps:
  - build
  - profile
  - profile: {vus: fib:8, repeat: 1}
`

func TestDecodeGoodPlan(t *testing.T) {
	p, err := plan.Decode("/plans/tiers.yaml", []byte(goodPlan))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if p.Name != "tiers" || p.Warehouses != 2 || p.Baseline != "disk-256MB-none" {
		t.Errorf("got name %q, warehouses %d, baseline %q", p.Name, p.Warehouses, p.Baseline)
	}
	if got, want := p.Question, "Which tier gives the most NOPM per dollar?"; got != want {
		t.Errorf("question: got %q, want %q (trimmed)", got, want)
	}
	var names []string
	for _, tg := range p.Targets {
		names = append(names, tg.Name)
	}
	// data_dir labels: last path elements (oltplab, disk); the first axis
	// varies slowest.
	want := []string{"file-a", "file-b",
		"oltplab-64MB-none", "oltplab-64MB-hdd", "oltplab-256MB-none", "oltplab-256MB-hdd",
		"disk-64MB-none", "disk-64MB-hdd", "disk-256MB-none", "disk-256MB-hdd"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("targets:\n got %v\nwant %v", names, want)
	}
	a := p.Targets[0]
	if got, want := a.SQLiteFile(), "/plans/a.db"; got != want {
		t.Errorf("relative sqlite path: got %s, want %s (resolved against the plan's directory)", got, want)
	}
	hdd := p.Target("disk-256MB-hdd")
	if hdd == nil {
		t.Fatal("no target disk-256MB-hdd")
	}
	in := hdd.Instance
	if in.DataDir != "/var/tmp/disk/disk-256MB-hdd" || in.Memory != 256<<20 || in.IOLimit.WriteIOPS != 150 ||
		in.IOLimit.ReadIOPS != 200 || in.Settings["synchronous_commit"] != "on" || in.Engine != "postgres" || in.Name != hdd.Name {
		t.Errorf("matrix target: got %+v", in)
	}
	if hdd.Axes["io_limit"] != "hdd" || hdd.Axes["memory"] != "256MB" {
		t.Errorf("axes: got %v", hdd.Axes)
	}
	// Every managed instance accepts the largest step's connections: the
	// build's, one per table (nine) plus the metadata's, more than 8 VUs
	// (fib:8 is 1,2,3,5,8) plus the counter connection.
	if got := hdd.Instance.MaxConnections; got != 10 {
		t.Errorf("max_connections: got %d, want 10", got)
	}
	if len(p.Steps) != 3 {
		t.Fatalf("steps: got %d, want 3", len(p.Steps))
	}
	if got, want := p.Steps[1].Step.Describe(), "profile 1,2,4 VUs × 2 repeats (interleaved), ramp-up 5s, 20s measured"; got != want {
		t.Errorf("profile step: got %q, want %q", got, want)
	}
	if got, want := p.Steps[2].Step.Describe(), "profile fib:8 VUs, ramp-up 5s, 20s measured"; got != want {
		t.Errorf("second profile step: got %q, want %q (the section's options with its own vus and repeat)", got, want)
	}
	units := p.Schedule()
	if got, want := len(units), 3*len(p.Targets); got != want {
		t.Fatalf("schedule: got %d units, want %d", got, want)
	}
	if units[0].TargetName() != "file-a" || units[2].TargetName() != "file-a" || units[3].TargetName() != "file-b" {
		t.Errorf("schedule is not target by target: %s %s %s", units[0].TargetName(), units[2].TargetName(), units[3].TargetName())
	}
	if p.Estimate() <= 0 {
		t.Errorf("estimate: got %s", p.Estimate())
	}
}

// TestDecodeBadPlans: each mistake gives one yamldoc.Error at its line, with
// the field's path.
func TestDecodeBadPlans(t *testing.T) {
	base := func(extra string) string {
		return "name: t\nwarehouses: 1\nsteps: [build]\ntargets:\n  - name: a\n    url: sqlite:a.db\n" + extra
	}
	cases := []struct {
		name, src string
		line      int
		path      string
		msg       string
	}{
		{"syntax", "name: t\n\tbad: tab\n", 2, "", "not valid YAML"},
		{"empty", "", 0, "", "empty"},
		{"not a mapping", "- a\n- b\n", 1, "", "a plan is a mapping"},
		{"unknown top-level field", base("warehouse: 3\n"), 7, "warehouse", "did you mean warehouses"},
		{"question misspelt", base("questions: why?\n"), 7, "questions", "did you mean question"},
		{"question not text", base("question: [a, b]\n"), 7, "question", "want a single value"},
		{"question too long", base("question: " + strings.Repeat("why ", 80) + "\n"), 7, "question", "at most 300"},
		{"wrong type", strings.Replace(base(""), "warehouses: 1", "warehouses: many", 1), 2, "warehouses", "want a whole number"},
		{"missing name", "warehouses: 1\nsteps: [build]\ntargets: [{name: a, url: 'sqlite:a.db'}]\n", 1, "name", "required"},
		{"bad name", strings.Replace(base(""), "name: t", "name: a b", 1), 1, "name", "want 1-32 letters"},
		{"no warehouses", "name: t\nsteps: [build]\ntargets: [{name: a, url: 'sqlite:a.db'}]\n", 1, "warehouses", "required"},
		{"unknown field in target", base("  - name: b\n    url: sqlite:b.db\n    cpu: 1\n"), 9, "targets[1].cpu", "did you mean cpus"},
		{"wrong type in target", base("  - name: b\n    engine: postgres\n    data_dir: [x]\n"), 9, "targets[1].data_dir", "want a single value"},
		{"io_limit type", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    io_limit: {write_iops: lots}\n"), 10, "targets[1].io_limit.write_iops", "want a whole number"},
		{"url and engine", base("  - name: b\n    url: sqlite:b.db\n    engine: postgres\n"), 7, "targets[1]", "one or the other"},
		{"neither url nor engine", base("  - name: b\n"), 7, "targets[1]", "want url"},
		{"unknown scheme", base("  - name: b\n    url: oracle://x@h/db\n"), 7, "targets[1].url", "unknown target scheme"},
		{"duplicate target", base("  - name: a\n    url: sqlite:c.db\n"), 7, "targets[1]", "also used by targets[0]"},
		{"same database", base("  - name: b\n    url: sqlite:a.db\n"), 7, "targets[1]", "same database as a"},
		{"unknown step", strings.Replace(base(""), "[build]", "[build, profil]", 1), 3, "steps[1]", "did you mean profile"},
		{"unused section checked", base("profile:\n  vus: [1]\n  duraton: 5s\n"), 9, "profile.duraton", "did you mean duration"},
		{"unknown profile option", strings.Replace(base("profile:\n  vus: [1]\n  ramp: 5s\n"), "[build]", "[build, profile]", 1), 9, "profile.ramp", "did you mean rampup"},
		{"bad duration", strings.Replace(base("profile:\n  vus: [1]\n  duration: 5\n"), "[build]", "[build, profile]", 1), 9, "profile.duration", "want a duration"},
		{"bad vus", strings.Replace(base("profile:\n  vus: fib:0\n"), "[build]", "[build, profile]", 1), 8, "profile.vus", "fib"},
		{"vus missing", strings.Replace(base(""), "[build]", "[build, profile]", 1), 3, "steps[1].profile", "vus is required"},
		{"bad step option", strings.Replace(base(""), "[build]", "[build, {profile: {vus: [1], repeat: x}}]", 1), 3, "steps[1].profile.repeat", "want a number of runs or auto"},
		{"bad precision", strings.Replace(base(""), "[build]", "[build, {profile: {vus: [1], repeat: auto, precision: 5}}]", 1), 3, "steps[1].profile.precision", "want a percentage such as 5%"},
		{"precision without auto", strings.Replace(base(""), "[build]", "[build, {profile: {vus: [1], repeat: 3, precision: 10%}}]", 1), 3, "steps[1].profile", "go with repeat: auto"},
		{"auto with two runs", strings.Replace(base(""), "[build]", "[build, {profile: {vus: [1], repeat: auto, min_repeats: 2}}]", 1), 3, "steps[1].profile", "min_repeats must be at least 3"},
		{"auto budget below minimum", strings.Replace(base(""), "[build]", "[build, {profile: {vus: [1], repeat: auto, min_repeats: 5, max_repeats: 4}}]", 1), 3, "steps[1].profile", "max_repeats (4) must be at least min_repeats (5)"},
		{"unknown baseline", base("baseline: c\n"), 7, "baseline", "no target named"},
		{"no targets", "name: t\nwarehouses: 1\nsteps: [build]\n", 1, "targets", "at least one target"},
		{"no steps", "name: t\nwarehouses: 1\ntargets: [{name: a, url: 'sqlite:a.db'}]\n", 1, "steps", "required"},
		{"matrix without engine", base("matrix:\n  axes: {memory: [1MB]}\n"), 8, "matrix.engine", "required"},
		{"two targets on one port", base("  - {name: b, engine: postgres, data_dir: /b, port: 15432}\n  - {name: c, engine: postgres, data_dir: /c, port: 15432}\n"), 8, "targets[2].port", "as b does"},
		{"port as an axis", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes: {port: [15432, 15433]}\n"), 10, "matrix.axes.port", "not an axis"},
		{"port across a matrix", base("matrix:\n  engine: postgres\n  data_dir: /x\n  port: 15432\n  axes: {memory: [1MB, 2MB]}\n"), 8, "matrix (target 2MB).port", "as 1MB does"},
		{"matrix unknown axis", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes: {colour: [red]}\n"), 10, "matrix.axes.colour", "not an axis"},
		{"matrix axis not a list", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes: {memory: 1MB}\n"), 10, "matrix.axes.memory", "want a list"},
		{"matrix unnamed mapping", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes:\n    io_limit: [{read_iops: 5}]\n"), 11, "matrix.axes.io_limit[0]", "give this value a label"},
		{"matrix name collision", base("matrix:\n  engine: postgres\n  data_dir: /x\n  name: \"{memory}\"\n  axes:\n    memory: [1MB, 2MB]\n    cpus: ['0', '1']\n"), 10, "matrix.name", "two targets get the name"},
		{"matrix unknown placeholder", base("matrix:\n  engine: postgres\n  data_dir: /x\n  name: \"{mem}\"\n  axes:\n    memory: [1MB]\n"), 10, "matrix.name", "not an axis"},
		{"matrix no data_dir", base("matrix:\n  engine: postgres\n  axes:\n    memory: [1MB]\n"), 8, "matrix.data_dir", "required"},
		{"matrix bad axis value type", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes:\n    max_connections: [1]\n"), 11, "matrix.axes.max_connections", "not an axis"},
		{"duplicate key", base("name: u\n"), 7, "name", "given twice"},
		{"unknown prices field", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      currency: USD\n      colour: red\n"), 11, "targets[1].prices.colour", "unknown field"},
		{"bad prices", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      currency: USD\n      years: 0\n"), 11, "targets[1].prices.years", "at least 1"},
		{"negative price", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      currency: USD\n      years: 3\n      hardware: {price: -5}\n"), 12, "targets[1].prices.hardware.price", "must not be negative"},
		{"missing currency", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      years: 3\n      hardware: {price: 5}\n"), 9, "targets[1].prices.currency", "required"},
		{"pack size 0", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      currency: USD\n      years: 3\n      db_licence: {per_pack: 3717, pack_cores: 0}\n"), 12, "targets[1].prices.db_licence.pack_cores", "at least 1"},
		{"minimum below pack", base("  - name: b\n    url: sqlite:b.db\n    prices:\n      currency: USD\n      years: 3\n      db_licence: {per_pack: 3717, pack_cores: 4, min_cores_per_server: 2}\n"), 12, "targets[1].prices.db_licence.min_cores_per_server", "must not be below pack_cores"},
		{"currencies differ", base("    prices: {currency: USD, years: 3, hardware: {price: 1}}\n  - name: b\n    url: sqlite:b.db\n    prices: {currency: EUR, years: 3, hardware: {price: 1}}\n"), 8, "targets[1].prices.currency", "one currency"},
		{"negative objective", base("cost: {objective_p90_ms: -1}\n"), 7, "cost.objective_p90_ms", "positive number"},
		{"unknown cost field", base("cost: {objective_p99_ms: 5}\n"), 7, "cost.objective_p99_ms", "unknown field"},
		{"parallel on one target", strings.Replace(base(""), "[build]", "[build, parallel]", 1), 3, "steps[1].parallel", "the plan has 1 target"},
		{"parallel bad tolerance", strings.Replace(base("  - name: b\n    url: sqlite:b.db\nparallel: {skew_tolerance: -1s}\n"), "[build]", "[build, parallel]", 1), 3, "steps[1].parallel", "skew_tolerance must not be negative"},
		{"parallel unknown option", base("parallel: {vu: 4}\n"), 7, "parallel.vu", "did you mean vus"},
		{"parallel bad vus", strings.Replace(base("  - name: b\n    url: sqlite:b.db\n"), "[build]", "[build, {parallel: {vus: 0}}]", 1), 3, "steps[1].parallel", "virtual users must be at least 1"},
		{"neighbours without noisy", strings.Replace(base("  - name: b\n    url: sqlite:b.db\n"), "[build]", "[build, neighbours]", 1), 3, "steps[1].neighbours", "noisy is required"},
		{"neighbours unknown noisy", strings.Replace(base("  - name: b\n    url: sqlite:b.db\nneighbours: {noisy: [c]}\n"), "[build]", "[build, neighbours]", 1), 3, "steps[1].neighbours", `no target named "c"`},
		{"neighbours all noisy", strings.Replace(base("  - name: b\n    url: sqlite:b.db\nneighbours: {noisy: [a, b]}\n"), "[build]", "[build, neighbours]", 1), 3, "steps[1].neighbours", "at least one must run the load"},
		{"neighbours bad interval", strings.Replace(base("  - name: b\n    url: sqlite:b.db\nneighbours: {noisy: [b], interval: 10ms}\n"), "[build]", "[build, neighbours]", 1), 3, "steps[1].neighbours", "interval must be at least 1s"},
		{"neighbours bad method", base("neighbours: {noisy: [a], backup: {method: rsync}}\n"), 7, "neighbours.backup.method", "want basebackup"},
		{"neighbours noisy not a list", base("neighbours: {noisy: a b}\n"), 7, "neighbours.noisy", "want a list"},
		{"latency unknown key", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: {read: 4ms, wrote: 1ms}\n"), 10, "targets[1].latency", `unknown key "wrote"`},
		{"latency bad delay", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: {fsync: 6 ms}\n"), 10, "targets[1].latency", "latency fsync=6 ms"},
		{"latency bad distribution", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: {read: lognormal 4ms p99 2ms}\n"), 10, "targets[1].latency", "p99 2ms must exceed the median 4ms"},
		{"latency key twice", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency:\n      read: 4ms\n      read: 5ms\n"), 12, "targets[1].latency.read", "given twice"},
		{"latency key twice in two spellings", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: {read: 4ms, READ: 5ms}\n"), 10, "targets[1].latency", "read given twice"},
		{"latency a list", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: [4ms]\n"), 10, "targets[1].latency", "want a mapping such as {read: 4ms"},
		{"latency nested value", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: {read: {fixed: 4ms}}\n"), 10, "targets[1].latency", "latency read: want a single value"},
		{"latency bad text", base("  - name: b\n    engine: postgres\n    data_dir: /x\n    latency: read:4ms\n"), 10, "targets[1].latency", "want KIND=DELAY"},
		{"matrix bad latency axis", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes:\n    latency: [0, {name: slow, value: {read: 20s}}]\n"), 11, "matrix.axes.latency[1]", "more than 10s"},
		{"matrix bad prices", base("matrix:\n  engine: postgres\n  data_dir: /x\n  axes: {memory: [1MB]}\n  prices: {years: 1}\n"), 11, "matrix.prices.currency", "required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := plan.Decode("plan.yaml", []byte(c.src))
			var pe *yamldoc.Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *yamldoc.Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if pe.Line != c.line || pe.Path != c.path || !strings.Contains(msg, c.msg) {
				t.Errorf("got %q (line %d, path %q), want line %d, path %q, containing %q", msg, pe.Line, pe.Path, c.line, c.path, c.msg)
			}
			if !strings.HasPrefix(msg, "plan.yaml:") {
				t.Errorf("error does not start with the file: %q", msg)
			}
		})
	}
}

func TestSyntaxErrorIsTyped(t *testing.T) {
	_, err := plan.Decode("p.yaml", []byte("a: [1, 2\n"))
	if !errors.Is(err, yamldoc.ErrSyntax) {
		t.Errorf("got %v, want yamldoc.ErrSyntax", err)
	}
	_, err = plan.Decode("p.yaml", []byte("name: t\nwarehouse: 1\n"))
	if errors.Is(err, yamldoc.ErrSyntax) {
		t.Errorf("an unknown field is not a syntax error: %v", err)
	}
}

func TestMatrixDirectoryLabels(t *testing.T) {
	src := `name: m
warehouses: 1
steps: [build]
matrix:
  engine: postgres
  axes:
    data_dir: [/dev/shm/x, /var/tmp/x, {name: fast, value: /mnt/nvme}]
`
	p, err := plan.Decode(filepath.Join(t.TempDir(), "m.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.TargetNames(), " ")
	if want := "dev-shm-x var-tmp-x fast"; got != want {
		t.Errorf("got %q, want %q (same last element: whole paths)", got, want)
	}
	if got, want := p.Targets[2].Instance.DataDir, "/mnt/nvme/fast"; got != want {
		t.Errorf("data dir: got %s, want %s", got, want)
	}
}

// TestExampleDecodes: the commented plan of `experiment --help` is a
// valid plan.
func TestExampleDecodes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.password"), []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(filepath.Join(dir, "example.yaml"), []byte(plan.Example))
	if err != nil {
		t.Fatalf("the help's example: %v", err)
	}
	if got := strings.Join(p.TargetNames(), " "); got != "tmpfs disk remote cpu0-none-1GB cpu0-none-2GB cpu0-hdd-1GB cpu0-hdd-2GB cpu0-1-none-1GB cpu0-1-none-2GB cpu0-1-hdd-1GB cpu0-1-hdd-2GB" {
		t.Errorf("targets: got %q", got)
	}
}

// TestExamplesDecode: the plans in examples/ stay valid plans.
func TestExamplesDecode(t *testing.T) {
	for _, name := range []string{"storage-tiers.yaml", "memory.yaml", "cores.yaml", "licences.yaml", "backup-tiers.yaml", "neighbours.yaml", "parallel.yaml", "rebuild.yaml", "study.yaml", "latency-tiers.yaml"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "examples", name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Decode(path, src)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(p.Targets) < 2 || p.Estimate() > 10*time.Minute {
				t.Errorf("%s: %d targets, estimated %s; want a comparison within 10 minutes", name, len(p.Targets), p.Estimate())
			}
		})
	}
}

// TestPlanExpansionBounded: a matrix of more targets than plan.MaxTargets (a
// 1000 × 1000 matrix, or 20 × 20), more targets or steps than a plan may
// have, and a plan file over plan.MaxPlanBytes are refused, counted before
// anything is built.
func TestPlanExpansionBounded(t *testing.T) {
	list := func(n int, f func(i int) string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = f(i)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	mem := func(i int) string { return fmt.Sprintf("%dMB", i+1) }
	cpus := func(i int) string { return fmt.Sprintf("'%d'", i) }
	matrix := func(n int) string {
		return "name: m\nwarehouses: 1\nsteps: [build]\nmatrix:\n  engine: postgres\n  data_dir: /x\n  axes:\n    memory: " +
			list(n, mem) + "\n    cpus: " + list(n, cpus) + "\n"
	}
	target := func(i int) string { return fmt.Sprintf("{name: t%d, url: 'sqlite:t%d.db'}", i, i) }
	cases := []struct {
		name, src string
		path, msg string
	}{
		{"a 1000 × 1000 matrix", matrix(1000), "matrix.axes.memory", "a plan has at most 256 targets"},
		{"a 20 × 20 matrix", matrix(20), "matrix.axes.cpus", "20 values make more than 256 targets"},
		{"257 targets", "name: m\nwarehouses: 1\nsteps: [build]\ntargets: " + list(plan.MaxTargets+1, target) + "\n", "targets", "257 targets: at most 256"},
		{"101 steps", "name: m\nwarehouses: 1\ntargets: [" + target(0) + "]\nsteps: " + list(plan.MaxSteps+1, func(int) string { return "build" }) + "\n",
			"steps", "101 steps: at most 100"},
		{"a plan over 1 MiB", "name: m\nwarehouses: 1\n# " + strings.Repeat("x", plan.MaxPlanBytes) + "\n", "", "a plan is at most"},
	}
	for _, c := range cases {
		_, err := plan.Decode("plan.yaml", []byte(c.src))
		var pe *yamldoc.Error
		if !errors.As(err, &pe) || pe.Path != c.path || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want a yamldoc.Error at %q saying %q", c.name, err, c.path, c.msg)
		}
	}
	// 16 × 16 is the most two axes may make.
	if p, err := plan.Decode("plan.yaml", []byte(matrix(16))); err != nil || len(p.Targets) != 256 {
		t.Errorf("a 16 × 16 matrix: %v", err)
	}
}

// TestLatencyField: a managed instance's latency layer is a plan field,
// as a mapping, as text, as 0 (the layer with zero delays, a fair
// baseline) and as a matrix axis; without it there is no layer.
func TestLatencyField(t *testing.T) {
	src := `name: l
warehouses: 1
steps: [build]
targets:
  - name: plain
    engine: postgres
    data_dir: /x/plain
  - name: zero
    engine: postgres
    data_dir: /x/zero
    latency: 0
  - name: map
    engine: postgres
    data_dir: /x/map
    wal_dir: /w/map
    latency: {read: 4ms, write: 1ms, fsync: lognormal 6ms p99 30ms, jitter: 10%, on: wal}
  - name: text
    engine: mariadb
    data_dir: /x/text
    latency: read=5ms,fsync=2ms with 1% at 50ms
matrix:
  engine: postgres
  data_dir: /m
  axes:
    latency: [{name: base, value: 0}, {name: ssd, value: {read: 1ms, write: 1ms, fsync: 1ms}}, "read=15ms"]
`
	p, err := plan.Decode(filepath.Join(t.TempDir(), "l.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tg := range p.Targets {
		if tg.Instance.Latency == nil {
			got[tg.Name] = "none"
			continue
		}
		got[tg.Name] = tg.Instance.Latency.String()
	}
	want := map[string]string{
		"plain":     "none",
		"zero":      "0",
		"map":       "read=4ms,write=1ms,fsync=lognormal 6ms p99 30ms,jitter=10%,on=wal",
		"text":      "read=5ms,fsync=2ms with 1% at 50ms",
		"base":      "0",
		"ssd":       "read=1ms,write=1ms,fsync=1ms",
		"read-15ms": "read=15ms",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("latency by target:\n got %v\nwant %v", got, want)
	}
}

// TestLatencyRefusedWithIOLimit: a plan that puts a latency layer and an
// io_limit on one target, or a latency layer on an embedded engine, is
// refused by the plan's check, in one line naming the target.
func TestLatencyRefusedWithIOLimit(t *testing.T) {
	for _, c := range []struct{ name, target, want string }{
		{"io_limit", "    engine: postgres\n    data_dir: DIR\n    io_limit: {write_iops: 100}\n    latency: {fsync: 5ms}\n",
			"io_limit and latency together"},
		{"embedded", "    engine: sqlite\n    data_dir: DIR\n    latency: 0\n", "not latency"},
		{"on=wal without wal_dir", "    engine: postgres\n    data_dir: DIR\n    latency: {fsync: 5ms, on: wal}\n", "on=wal without a wal_dir"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "name: l\nwarehouses: 1\nsteps: [build]\ntargets:\n  - name: a\n" + strings.ReplaceAll(c.target, "DIR", filepath.Join(dir, "a"))
			p, err := plan.Decode(filepath.Join(dir, "l.yaml"), []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			err = plan.Validate(t.Context(), p)
			if err == nil {
				t.Fatal("Validate: no error")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || !strings.Contains(msg, "l.yaml:5: targets[0]") {
				t.Errorf("got %q, want one line at l.yaml:5: targets[0] containing %q", msg, c.want)
			}
		})
	}
}

// TestMatrixAxisSetsSeveralFields: an axis whose values each set several
// instance fields (the buffer pool moving with the memory limit) makes
// one target per value, each with every field its value sets, named by
// the value's label.
func TestMatrixAxisSetsSeveralFields(t *testing.T) {
	src := `name: dram
warehouses: 1
steps: [build]
matrix:
  engine: postgres
  data_dir: /var/tmp/dram
  settings: {synchronous_commit: "on"}
  axes:
    dram:
      - {name: 1GB, set: {memory_limit: 1GB, memory: 256MB, settings: {effective_cache_size: 768MB}}}
      - set: {memory_limit: 2GB, memory: 512MB}
    cpus: ['0', '0-1']
  name: "{dram}-cpu{cpus}"
`
	p, err := plan.Decode("/plans/dram.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	var names []string
	for _, tg := range p.Targets {
		names = append(names, tg.Name)
	}
	if got, want := strings.Join(names, " "), "1GB-cpu0 1GB-cpu0-1 2GB-512MB-cpu0 2GB-512MB-cpu0-1"; got != want {
		t.Errorf("targets: got %s, want %s", got, want)
	}
	small, big := p.Target("1GB-cpu0-1"), p.Target("2GB-512MB-cpu0")
	if small == nil || big == nil {
		t.Fatalf("targets missing: %v", names)
	}
	if in := small.Instance; in.MemoryLimit != 1<<30 || in.Memory != 256<<20 || in.CPUs != "0-1" ||
		in.Settings["effective_cache_size"] != "768MB" || in.Settings["synchronous_commit"] != "on" {
		t.Errorf("1GB target: got %+v", in)
	}
	if in := big.Instance; in.MemoryLimit != 2<<30 || in.Memory != 512<<20 || in.CPUs != "0" ||
		in.Settings["effective_cache_size"] != "" || in.Settings["synchronous_commit"] != "on" {
		t.Errorf("2GB target: got %+v (another target's settings leaked in?)", in)
	}
	if small.Axes["dram"] != "1GB" || big.Axes["dram"] != "2GB-512MB" {
		t.Errorf("axes: got %v and %v", small.Axes, big.Axes)
	}
}

func TestMatrixSetAxisErrors(t *testing.T) {
	base := func(axes string) string {
		return "name: t\nwarehouses: 1\nsteps: [build]\nmatrix:\n  engine: postgres\n  data_dir: /x\n  axes:\n" + axes
	}
	cases := []struct {
		name, src string
		line      int
		path      string
		msg       string
	}{
		{"unknown field in set", base("    dram: [{name: a, set: {memroy: 1GB}}]\n"), 8, "matrix.axes.dram[0].set.memroy", "did you mean memory"},
		{"field no axis may set", base("    dram: [{name: a, set: {bin_dir: /usr/bin}}]\n"), 8, "matrix.axes.dram[0].set.bin_dir", "not a field an axis can set"},
		{"bad value in set", base("    dram: [{name: a, set: {memory: lots}}]\n"), 8, "matrix.axes.dram[0].set.memory", "lots"},
		{"set not a mapping", base("    dram: [{name: a, set: 1GB}]\n"), 8, "matrix.axes.dram[0].set", "want the instance fields"},
		{"unknown key beside set", base("    dram: [{name: a, set: {memory: 1GB}, value: 2}]\n"), 8, "matrix.axes.dram[0].value", "unknown field (known: name, set)"},
		{"mapping value without a name", base("    dram: [{set: {io_limit: {read_iops: 5}}}]\n"), 8, "matrix.axes.dram[0]", "give this value a label"},
		{"plain value on a named axis", base("    dram: [{set: {memory: 1GB}}, 2GB]\n"), 8, "matrix.axes.dram", "not an axis"},
		{"two axes set one field", base("    dram: [{set: {memory: 1GB, memory_limit: 4GB}}]\n    memory: [2GB]\n"), 9, "matrix.axes.memory", "sets memory, which axis dram sets too"},
		{"two axes set one setting", base("    a: [{name: x, set: {settings: {work_mem: 4MB}}}]\n    b: [{name: y, set: {settings: {work_mem: 8MB}}}]\n"), 9, "matrix.axes.b", "sets settings.work_mem"},
		{"same labels", base("    dram: [{set: {memory: 1GB}}, {set: {memory: 1GB, cpus: '0'}, name: 1GB}]\n"), 8, "matrix.axes.dram[1]", "same label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := plan.Decode("plan.yaml", []byte(c.src))
			var pe *yamldoc.Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *yamldoc.Error", err)
			}
			if msg := err.Error(); pe.Line != c.line || pe.Path != c.path || !strings.Contains(msg, c.msg) {
				t.Errorf("got %q (line %d, path %q), want line %d, path %q, containing %q", msg, pe.Line, pe.Path, c.line, c.path, c.msg)
			}
		})
	}
}

// TestTargetPort: a managed target's port reaches its instance.
func TestTargetPort(t *testing.T) {
	p, err := plan.Decode("plan.yaml", []byte("name: t\nwarehouses: 1\nsteps: [build]\ntargets:\n  - {name: a, engine: postgres, data_dir: /a, port: 15432}\n  - {name: b, engine: postgres, data_dir: /b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Target("a").Instance.Port; got != 15432 {
		t.Errorf("port: got %d, want 15432", got)
	}
	if got := p.Target("b").Instance.Port; got != 0 {
		t.Errorf("no port: got %d, want 0 (a free one)", got)
	}
}

// TestInstanceTypePricedFromList: a target names its cloud instance type
// and the plan's price list gives its price per hour, currency and
// cores, written out or as a matrix axis that moves the cores with the
// type (the x1.41 sweep); mistakes are one line at the target.
func TestInstanceTypePricedFromList(t *testing.T) {
	dir := t.TempDir()
	csv := "instance_type,vcpus,memory_gib,price_per_hour,currency\nm6i.large,2,8,0.096,USD\nm6i.xlarge,4,16,0.192,USD\nc6i.large,2,4,0.085,USD\n"
	if err := os.WriteFile(filepath.Join(dir, "prices.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	decode := func(src string) (*plan.Plan, error) {
		return plan.Decode(filepath.Join(dir, "plan.yaml"), []byte("name: t\nwarehouses: 1\nsteps: [build]\nprice_list: prices.csv\n"+src))
	}
	p, err := decode(`targets:
  - {name: a, engine: postgres, data_dir: /a, cpus: "0-1", instance_type: m6i.large, prices: {years: 1, storage: {per_gb_month: 0.08, gb: 100}}}
matrix:
  engine: postgres
  data_dir: /m
  prices: {years: 1}
  axes:
    size:
      - {name: c2, set: {cpus: "0-1", instance_type: c6i.large}}
      - {name: m2, set: {cpus: "0-1", instance_type: m6i.large}}
`)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	for _, c := range []struct {
		target  string
		perHour float64
	}{{"a", 0.096}, {"c2", 0.085}, {"m2", 0.096}} {
		pr := p.Target(c.target).Prices
		if pr == nil || pr.Cloud == nil || pr.Cloud.PerHour != c.perHour || pr.Currency != "USD" || pr.Cores != 2 {
			t.Errorf("%s: got %+v, want %v USD per hour on 2 cores", c.target, pr, c.perHour)
		}
	}
	if p.Target("a").Prices.Storage == nil {
		t.Errorf("target a lost its storage prices")
	}
	if c2, m2 := p.Target("c2").Prices, p.Target("m2").Prices; c2 == m2 || c2.Cloud == m2.Cloud {
		t.Errorf("the matrix's targets share their prices: each needs its own copy")
	}

	for _, c := range []struct{ name, src, path, msg string }{
		{"unknown type", "targets: [{name: a, url: 'sqlite:a.db', instance_type: m6i.larg, prices: {years: 1}}]\n", "targets[0].prices.cloud.instance_type", "not in the price list prices.csv"},
		{"no prices", "targets: [{name: a, url: 'sqlite:a.db', instance_type: m6i.large}]\n", "targets[0].prices", "at least the period"},
		{"cpus disagree", "targets: [{name: a, engine: postgres, data_dir: /a, cpus: '0', instance_type: m6i.large, prices: {years: 1}}]\n", "targets[0].cpus", "instance type m6i.large has 2 vCPUs"},
		{"per_hour given", "targets: [{name: a, url: 'sqlite:a.db', instance_type: m6i.large, prices: {years: 1, cloud: {per_hour: 1}}}]\n", "targets[0].prices.cloud.per_hour", "comes from the price list"},
		{"missing list", "targets: [{name: a, url: 'sqlite:a.db', prices: {years: 1}}]\n", "price_list", "no such file"},
		{"list not a file", "targets: [{name: a, url: 'sqlite:a.db', prices: {years: 1}}]\n", "price_list", "not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src
			switch c.name {
			case "missing list":
				_, err = plan.Decode(filepath.Join(dir, "plan.yaml"), []byte("name: t\nwarehouses: 1\nsteps: [build]\nprice_list: nosuch.csv\n"+src))
			case "list not a file":
				_, err = plan.Decode(filepath.Join(dir, "plan.yaml"), []byte("name: t\nwarehouses: 1\nsteps: [build]\nprice_list: /dev/null\n"+src))
			default:
				_, err = decode(src)
			}
			var pe *yamldoc.Error
			if !errors.As(err, &pe) || pe.Path != c.path || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %v, want an error at %s containing %q", err, c.path, c.msg)
			}
		})
	}
	// Without a price list, a type has no price.
	_, err = plan.Decode("plan.yaml", []byte("name: t\nwarehouses: 1\nsteps: [build]\ntargets: [{name: a, url: 'sqlite:a.db', instance_type: m6i.large, prices: {years: 1}}]\n"))
	if err == nil || !strings.Contains(err.Error(), "name one with price_list") {
		t.Errorf("no price list: got %v", err)
	}
}
