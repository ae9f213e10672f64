package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/mysql"
	_ "github.com/oltplab/oltplab/internal/dialect/postgres"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// canDropCaches reports whether this process may drop the OS page cache
// (a cold restart does when it may).
func canDropCaches() bool {
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// quickSettings trade durability for speed: the tests measure nothing.
var quickSettings = map[instance.Engine]map[string]string{
	instance.Postgres: {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"},
	instance.MariaDB:  {"innodb_flush_log_at_trx_commit": "2", "innodb_doublewrite": "0"},
}

// managedEnv starts a managed instance of engine on a fresh directory
// (reachable by the server's own user), builds one warehouse in it and
// returns an Env recording into a fresh store, the instance, and the
// database opened on it.
func managedEnv(t *testing.T, engine instance.Engine) (*scenario.Env, *instance.Instance, dialect.Database) {
	t.Helper()
	testenv.Require(t, managedNeed[engine])
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "oltplab-scenario-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	inst, err := instance.Start(ctx, instance.Spec{Name: "scenario-" + string(engine), Engine: engine,
		DataDir: filepath.Join(dir, "data"), Settings: quickSettings[engine]}, nil)
	if instance.KindOf(err) == instance.KindBinary {
		testenv.Unavailable(t, managedNeed[engine], err)
	}
	if err != nil {
		t.Fatalf("start %s: %v", engine, err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := dialect.Open(ctx, inst.Target())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := &scenario.Env{Store: st, ToolVersion: "test", NoCrossCheck: true}
	if _, _, err := env.Build(ctx, db, inst.Target(), load.Options{Warehouses: 1, Workers: 2, Seed: 7, ToolVersion: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	return env, inst, db
}

// TestRebuildManaged rebuilds the largest index of ORDER-LINE after a cold
// restart of each managed engine and again warm, and checks what is
// recorded and that the schema is intact after.
func TestRebuildManaged(t *testing.T) {
	for _, engine := range instance.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			env, inst, db := managedEnv(t, engine)
			ctx := context.Background()
			out, err := env.Rebuild(ctx, db, inst.Target(), scenario.RebuildOptions{Label: "rb", Cold: true, Repeat: 1,
				Server: inst, DataDir: inst.Spec().DataDir})
			if err != nil {
				t.Fatalf("rebuild: %v", err)
			}
			for _, p := range out.Phases {
				if p.ServerCPUSeconds != nil {
					t.Logf("%s %s: %.2f s elapsed, %.2f s CPU (%s)", engine, p.Cache, p.ElapsedSeconds, *p.ServerCPUSeconds, out.CPUSource)
				}
			}
			if out.Status != store.StatusOK || out.Index == "" || out.Index != out.Indexes[0].Name || !out.Indexes[0].Primary {
				t.Errorf("rebuild of %q (indexes %+v): status %s, want ok and the primary key, the largest", out.Index, out.Indexes, out.Status)
			}
			if out.CPUSource == "" {
				t.Errorf("no CPU source: a managed instance's CPU time is measured")
			}
			if got := len(out.Phases); got != 2 || out.Phases[0].Cache != summary.CacheCold || out.Phases[1].Cache != summary.CacheWarm {
				t.Fatalf("phases: got %+v, want cold then warm", out.Phases)
			}
			cold := out.Phases[0]
			if cold.Restart == nil || cold.CacheDropped != canDropCaches() || cold.Restart.CacheDropped != cold.CacheDropped {
				t.Errorf("cold phase: restart %+v, cache dropped %v; want a restart that dropped the cache iff this process may (%v)",
					cold.Restart, cold.CacheDropped, canDropCaches())
			}
			for _, p := range out.Phases {
				if p.ElapsedSeconds <= 0 || p.ServerCPUSeconds == nil || *p.ServerCPUSeconds < 0 || p.WaitSeconds == nil ||
					*p.WaitSeconds != p.ElapsedSeconds-*p.ServerCPUSeconds || p.SizeAfterBytes <= 0 || p.Window.ToMillis < p.Window.FromMillis {
					t.Errorf("%s phase %+v: want positive elapsed, CPU and size, waited = elapsed - CPU, a window", p.Cache, p)
				}
			}
			if out.Warm == nil || out.Cold == nil || out.Warm.Elapsed.N != 1 || out.Warm.CPU == nil {
				t.Errorf("spread: cold %+v warm %+v, want one of each with CPU", out.Cold, out.Warm)
			}
			r, err := env.Store.GetRun(ctx, out.RunID)
			if err != nil {
				t.Fatal(err)
			}
			var stored summary.Rebuild
			if r.Kind != store.KindRebuild || r.Label != "rb" || json.Unmarshal(r.Summary, &stored) != nil || len(stored.Phases) != 2 {
				t.Errorf("stored run: kind %s label %q summary %s; want a rebuild with two phases", r.Kind, r.Label, r.Summary)
			}
			// The schema is intact: the server restarted, so a new connection.
			after, err := dialect.Open(ctx, inst.Target())
			if err != nil {
				t.Fatal(err)
			}
			defer after.Close()
			check, err := env.Check(ctx, after, inst.Target())
			if err != nil || !check.Passed {
				t.Errorf("check after the rebuild: passed %v, %v: %+v", check.Passed, err, check.Conditions)
			}
			t.Run("as a target", func(t *testing.T) { rebuildTarget(t, env, after, inst.Target()) })
		})
	}
}

// rebuildTarget: without the Server, as on a target oltplab does not
// manage, a cold cache is not possible: warm only, elapsed time only, and
// the result says so.
func rebuildTarget(t *testing.T, env *scenario.Env, db dialect.Database, tg dialect.Target) {
	ctx := context.Background()
	out, err := env.Rebuild(ctx, db, tg, scenario.RebuildOptions{Cold: true, Repeat: 2, AllIndexes: true})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if len(out.Phases) != 2 || out.Phases[0].Cache != summary.CacheWarm || out.Phases[1].Cache != summary.CacheWarm {
		t.Fatalf("phases: %+v, want two warm ones", out.Phases)
	}
	notes := strings.Join(out.Notes, "; ")
	if !strings.Contains(notes, "cold cache is not possible") || !strings.Contains(notes, "server CPU time is measured on managed instances only") ||
		out.CPUSource != "" || out.Index != "" || !out.AllIndexes || out.Rebuild.Rebuild.Rewrites == "" {
		t.Errorf("notes %q, CPU source %q, index %q, rebuild %+v: want the cold cache and the CPU time said unavailable, every index rebuilt",
			out.Notes, out.CPUSource, out.Index, out.Rebuild)
	}
	for _, p := range out.Phases {
		if p.ElapsedSeconds <= 0 || p.ServerCPUSeconds != nil || p.Restart != nil {
			t.Errorf("phase %+v: want elapsed only", p)
		}
	}
	if out.Warm == nil || out.Warm.Elapsed.N != 2 || out.Cold != nil {
		t.Errorf("spread: cold %+v warm %+v, want two warm", out.Cold, out.Warm)
	}
	if c, err := env.Check(ctx, db, tg); err != nil || !c.Passed {
		t.Errorf("check after the rebuild: passed %v, %v", c.Passed, err)
	}

	for _, tc := range []struct {
		name string
		o    scenario.RebuildOptions
	}{
		{"repeat 0", scenario.RebuildOptions{Repeat: 0}},
		{"repeat -1", scenario.RebuildOptions{Repeat: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := env.Rebuild(ctx, db, tg, tc.o); !errors.Is(err, scenario.ErrInvalidOptions) || out.RunID != 0 {
				t.Errorf("got run %d, %v; want nothing stored and ErrInvalidOptions", out.RunID, err)
			}
		})
	}
	empty, etg := emptySQLite(t)
	if out, err := env.Rebuild(ctx, empty, etg, scenario.RebuildOptions{Repeat: 1}); !errors.Is(err, scenario.ErrNoSchema) || out.RunID != 0 {
		t.Errorf("rebuild without a schema: got run %d, %v; want nothing stored and ErrNoSchema", out.RunID, err)
	}
}

// emptySQLite opens a database file without a schema.
func emptySQLite(t *testing.T) (dialect.Database, dialect.Target) {
	t.Helper()
	tg, err := dialect.ParseTarget("sqlite:"+filepath.Join(t.TempDir(), "empty.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := dialect.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, tg
}
