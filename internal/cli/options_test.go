package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
)

// testApp is an app for command tests below the process: no
// environment, output discarded.
func testApp() *app {
	return &app{stdio: Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, env: Env{}}
}

// parseParallel runs `oltplab parallel args` up to its options: what the
// command would run, without running it.
func parseParallel(t *testing.T, args ...string) (*parallelOptions, error) {
	t.Helper()
	var got *parallelOptions
	err := parallelCmd(context.Background(), testApp(), args, func(_ context.Context, o *parallelOptions) error {
		got = o
		return nil
	})
	if err == nil && got == nil && !slices.Contains(args, "--help") {
		t.Fatalf("parallel %v: no error and nothing run", args)
	}
	return got, err
}

func parseNeighbours(t *testing.T, args ...string) (*neighboursOptions, error) {
	t.Helper()
	var got *neighboursOptions
	err := neighboursCmd(context.Background(), testApp(), args, func(_ context.Context, o *neighboursOptions) error {
		got = o
		return nil
	})
	if err == nil && got == nil && !slices.Contains(args, "--help") {
		t.Fatalf("neighbours %v: no error and nothing run", args)
	}
	return got, err
}

// TestParallelFlags: `oltplab parallel`'s flags fill the options of the
// plan's parallel step and the command's own; bad ones are usage errors
// before anything runs.
func TestParallelFlags(t *testing.T) {
	o, err := parseParallel(t, "--on", "sqlite:a.db", "--on", "b=sqlite:b.db")
	if err != nil {
		t.Fatal(err)
	}
	want := experiment.DefaultParallel()
	want.Rampup, want.Duration = 30*time.Second, 2*time.Minute
	if !reflect.DeepEqual(o.step, want) || o.name != "parallel" || o.dryRun || o.printPlan ||
		strings.Join(o.on, " ") != "sqlite:a.db b=sqlite:b.db" {
		t.Errorf("defaults: got %+v", o)
	}

	o, err = parseParallel(t, "--on", "sqlite:a.db", "--on", "sqlite:b.db", "--vus", "3", "--rampup", "1s", "--duration", "5s",
		"--grace", "0s", "--seed", "42", "--all-warehouses", "--client-sql", "--max-retries", "0", "--repeat", "4",
		"--skew-tolerance", "250ms", "--name", "p", "--dry-run", "--print-plan", "--results", "r.db")
	if err != nil {
		t.Fatal(err)
	}
	want = experiment.ParallelOptions{VUs: 3, Load: plan.Load{Rampup: time.Second, Duration: 5 * time.Second, Grace: 0,
		ClientSQL: true, AllWarehouses: true, MaxRetries: 0, ReconnectFor: want.ReconnectFor, MaxFailureRate: want.MaxFailureRate,
		MaxStall: want.MaxStall, MaxForeignCPU: want.MaxForeignCPU, MaxSteal: want.MaxSteal, Seed: 42},
		Repeat: 4, SkewTolerance: 250 * time.Millisecond}
	if !reflect.DeepEqual(o.step, want) || o.name != "p" || !o.dryRun || !o.printPlan || o.results.path != "r.db" {
		t.Errorf("every flag:\n got %+v\nwant step %+v", o, want)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"one target", []string{"--on", "sqlite:a.db"}, "want at least two targets"},
		{"bad duration", []string{"--on", "sqlite:a.db", "--on", "sqlite:b.db", "--duration", "soon"}, "invalid argument"},
		{"a flag the step does not take", []string{"--on", "sqlite:a.db", "--on", "sqlite:b.db", "--reconnect-for", "1m"}, "unknown flag"},
	} {
		o, err := parseParallel(t, c.args...)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) || o != nil {
			t.Errorf("%s: got %v (exit %d), options %v; want a usage error saying %q before running", c.name, err, exitCode(err), o, c.want)
		}
	}
	if o, err := parseParallel(t, "--help"); err != nil || o != nil {
		t.Errorf("--help: got %v, %v; want nothing run, no error", o, err)
	}
}

// TestNeighboursFlags: `oltplab neighbours`'s flags fill the options of
// the plan's neighbours step; validate completes them (absolute
// directories, the default noisy instance, the backup method) and refuses
// what does not go together before anything runs.
func TestNeighboursFlags(t *testing.T) {
	o, err := parseNeighbours(t, "--engine", "mariadb", "--data-dir", "nb", "--instances", "4", "--memory", "64MB",
		"--warehouses", "6", "--vus", "2", "--rampup", "2s", "--grace", "1s", "--seed", "7", "--client-sql",
		"--all-warehouses", "--max-retries", "0", "--baseline", "30s", "--cycles", "3", "--interval", "20s",
		"--backup-dir", "bk", "--backup-method", "mariadb-backup", "--backup-jobs", "2", "--skew-tolerance", "2s", "--name", "nb1")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	d := experiment.DefaultNeighbours()
	want := experiment.NeighboursOptions{Noisy: []string{"n4"}, VUs: 2,
		Load: plan.Load{Rampup: 2 * time.Second, Duration: d.Duration, Grace: time.Second, ClientSQL: true, AllWarehouses: true,
			ReconnectFor: d.ReconnectFor, MaxFailureRate: d.MaxFailureRate, MaxStall: d.MaxStall, MaxForeignCPU: d.MaxForeignCPU,
			MaxSteal: d.MaxSteal, Seed: 7},
		Baseline: 30 * time.Second, Cycles: 3, Interval: 20 * time.Second, SkewTolerance: 2 * time.Second,
		Backup: experiment.NeighboursBackup{To: filepath.Join(wd, "bk"), Method: instance.MariaBackup, Jobs: 2}}
	if !reflect.DeepEqual(o.step, want) {
		t.Errorf("step:\n got %+v\nwant %+v", o.step, want)
	}
	if !o.managed() || o.engine != instance.MariaDB || o.dataDir != filepath.Join(wd, "nb") || o.instances != 4 ||
		o.warehouses != 6 || o.memory != 64<<20 || o.name != "nb1" {
		t.Errorf("command: got %+v", o)
	}

	o, err = parseNeighbours(t, "--on", "sqlite:a.db", "--on", "sqlite:b.db", "--noisy", "t1,t2")
	if err != nil || o.managed() || strings.Join(o.step.Noisy, ",") != "t1,t2" || o.step.Rampup != 30*time.Second {
		t.Errorf("--on: got %+v, %v", o, err)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"engine without directory", []string{"--engine", "postgres"}, "go together"},
		{"embedded engine", []string{"--engine", "sqlite", "--data-dir", "d"}, "want postgres or mariadb"},
		{"both forms", []string{"--engine", "postgres", "--data-dir", "d", "--on", "sqlite:a.db"}, "not both"},
		{"targets without noisy", []string{"--on", "sqlite:a.db", "--on", "sqlite:b.db"}, "--noisy is required"},
		{"bad method", []string{"--engine", "postgres", "--data-dir", "d", "--backup-method", "rsync"}, "want basebackup"},
		{"bad noisy name", []string{"--engine", "postgres", "--data-dir", "d", "--noisy", "a b"}, "not a target name"},
		{"a flag the step does not take", []string{"--engine", "postgres", "--data-dir", "d", "--duration", "1m"}, "unknown flag"},
	} {
		o, err := parseNeighbours(t, c.args...)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) || o != nil {
			t.Errorf("%s: got %v (exit %d), options %v; want a usage error saying %q before running", c.name, err, exitCode(err), o, c.want)
		}
	}
}

// TestGeneratedPlansUnchanged: the plans `oltplab parallel` and
// `oltplab neighbours` build as values read back as the plans they wrote
// as text before (testdata/plans, written by the earlier text generator
// from the same flags): the same targets and the same steps' options.
func TestGeneratedPlansUnchanged(t *testing.T) {
	a, b, c := "sqlite:/srv/oltplab/a.db", "sqlite:/srv/oltplab/b.db", "sqlite:/srv/oltplab/c.db"
	for _, tc := range []struct {
		file string
		cmd  string
		args []string
	}{
		{"par-basic", "parallel", []string{"--on", a, "--on", "x=" + b}},
		{"par-full", "parallel", []string{"--on", "a=" + a, "--on", "b=" + b, "--on", c, "--vus", "3", "--rampup", "1s",
			"--duration", "5s", "--grace", "0s", "--seed", "42", "--all-warehouses", "--client-sql", "--max-retries", "0",
			"--repeat", "4", "--skew-tolerance", "250ms", "--name", "my.par"}},
		{"par-retries", "parallel", []string{"--on", a, "--on", b, "--max-retries", "3"}},
		{"nb-managed", "neighbours", []string{"--engine", "postgres", "--data-dir", "/srv/oltplab/nb"}},
		{"nb-managed-full", "neighbours", []string{"--engine", "mariadb", "--data-dir", "/srv/oltplab/nb", "--instances", "4",
			"--noisy", "n1,n2", "--memory", "64MB", "--warehouses", "6", "--vus", "2", "--rampup", "2s", "--grace", "1s",
			"--seed", "7", "--client-sql", "--all-warehouses", "--max-retries", "0", "--baseline", "30s", "--cycles", "3",
			"--interval", "20s", "--backup-dir", "/srv/oltplab/bk", "--backup-method", "mariadb-backup", "--backup-jobs", "2",
			"--skew-tolerance", "2s", "--name", "nb1"}},
		{"nb-on", "neighbours", []string{"--on", a, "--on", b, "--noisy", "t2", "--backup-dir", "/srv/oltplab/bk",
			"--cycles", "2", "--interval", "5s"}},
		{"nb-on-method", "neighbours", []string{"--on", "p=" + a, "--on", "q=" + b, "--on", "r=" + c, "--noisy", "q,r",
			"--backup-dir", "/srv/oltplab/rel/bk", "--backup-jobs", "1"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join("testdata", "plans", tc.file+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			ap := testApp()
			var f *plan.File
			if tc.cmd == "parallel" {
				o, err := parseParallel(t, tc.args...)
				if err != nil {
					t.Fatal(err)
				}
				ts, err := ap.resolveTargets("parallel", o.on)
				if err != nil {
					t.Fatal(err)
				}
				f = o.plan(ts, 1)
			} else {
				o, err := parseNeighbours(t, tc.args...)
				if err != nil {
					t.Fatal(err)
				}
				var ts []*plan.TargetSpec
				if !o.managed() {
					if ts, err = ap.resolveTargets("neighbours", o.on); err != nil {
						t.Fatal(err)
					}
				}
				f = o.plan(ts, 1)
			}
			src, err := f.Encode()
			if err != nil {
				t.Fatal(err)
			}
			was, err := plan.Decode("("+tc.cmd+")", old)
			if err != nil {
				t.Fatal(err)
			}
			now, err := plan.Decode("("+tc.cmd+")", src)
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			if was.Name != now.Name || was.Warehouses != now.Warehouses || was.Baseline != now.Baseline ||
				len(was.Targets) != len(now.Targets) || len(was.Steps) != len(now.Steps) {
				t.Fatalf("got plan %s (%d warehouses, %d targets, %d steps), want %s (%d, %d, %d):\n%s", now.Name, now.Warehouses,
					len(now.Targets), len(now.Steps), was.Name, was.Warehouses, len(was.Targets), len(was.Steps), src)
			}
			for i, w := range was.Targets {
				g := now.Targets[i]
				if g.Name != w.Name || g.URL != w.URL || g.PasswordFile != w.PasswordFile || !reflect.DeepEqual(g.Instance, w.Instance) {
					t.Errorf("target %d: got %+v, want %+v", i, g, w)
				}
			}
			for i, w := range was.Steps {
				if g := now.Steps[i]; g.Kind != w.Kind || !reflect.DeepEqual(g.Step, w.Step) {
					t.Errorf("step %d: got %s %+v, want %s %+v", i, g.Kind.Name, g.Step, w.Kind.Name, w.Step)
				}
			}
		})
	}
}

// TestMonitorFlags: `oltplab monitor`'s flags into its options; a window
// or interval it cannot keep is a usage error before anything runs.
func TestMonitorFlags(t *testing.T) {
	parse := func(args ...string) (*monitorOptions, error) {
		var got *monitorOptions
		err := monitorCmd(context.Background(), testApp(), args, func(_ context.Context, o *monitorOptions) error {
			got = o
			return nil
		})
		return got, err
	}
	o, err := parse()
	if err != nil || o.duration != 10*time.Minute || o.interval != time.Second || o.json || o.target.target != "" {
		t.Errorf("defaults: got %+v, %v", o, err)
	}
	o, err = parse("--target", "sqlite:x.db", "--duration", "30s", "--interval", "500ms", "--label", "l", "--json", "--agent", "h:7300")
	if err != nil || o.duration != 30*time.Second || o.interval != 500*time.Millisecond || o.label != "l" || !o.json ||
		o.agent.addr != "h:7300" || o.target.target != "sqlite:x.db" {
		t.Errorf("every flag: got %+v, %v", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "500ms"}, "--duration must be at least 1s"},
		{[]string{"--duration", "2s", "--interval", "3s"}, "--interval must be between"},
		{[]string{"--interval", "10ms"}, "--interval must be between"},
		{[]string{"--label", "a\x01b"}, "label"},
	} {
		if o, err := parse(c.args...); exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) || o != nil {
			t.Errorf("%q: got %v (exit %d), options %v; want a usage error saying %q", c.args, err, exitCode(err), o, c.want)
		}
	}
}

// TestExperimentRunResumeArgs: `experiment run` takes one plan file and
// its flags, `experiment resume` one experiment id and --plan; anything
// else is a usage error before anything runs.
func TestExperimentRunResumeArgs(t *testing.T) {
	run := func(args ...string) (*experimentRunOptions, error) {
		var got *experimentRunOptions
		err := experimentRunCmd(context.Background(), testApp(), args, func(_ context.Context, o *experimentRunOptions) error {
			got = o
			return nil
		})
		return got, err
	}
	resume := func(args ...string) (*experimentResumeOptions, error) {
		var got *experimentResumeOptions
		err := experimentResumeCmd(context.Background(), testApp(), args, func(_ context.Context, o *experimentResumeOptions) error {
			got = o
			return nil
		})
		return got, err
	}
	o, err := run("--dry-run", "p.yaml", "--results", "r.db", "--metrics-listen", "127.0.0.1:0")
	if err != nil || o.plan != "p.yaml" || !o.dryRun || o.results.path != "r.db" || o.metricsListen != "127.0.0.1:0" {
		t.Errorf("run: got %+v, %v", o, err)
	}
	for _, args := range [][]string{{}, {"a.yaml", "b.yaml"}, {"--dryrun", "p.yaml"}} {
		if o, err := run(args...); exitCode(err) != exitUsage || o != nil {
			t.Errorf("run %q: got %v (exit %d), options %v; want a usage error", args, err, exitCode(err), o)
		}
	}
	r, err := resume("7", "--plan", "p.yaml")
	if err != nil || r.id != 7 || r.plan != "p.yaml" {
		t.Errorf("resume: got %+v, %v", r, err)
	}
	for _, args := range [][]string{{}, {"0"}, {"x"}, {"1", "2"}} {
		if r, err := resume(args...); exitCode(err) != exitUsage || r != nil {
			t.Errorf("resume %q: got %v (exit %d), options %v; want a usage error", args, err, exitCode(err), r)
		}
	}
}
