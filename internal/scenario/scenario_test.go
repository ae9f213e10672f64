package scenario_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// sqliteEnv builds one warehouse in a fresh SQLite file and returns an Env
// recording into a fresh store, with the database and its target.
func sqliteEnv(t *testing.T) (*scenario.Env, dialect.Database, dialect.Target) {
	testenv.Require(t, testenv.Long)
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tg, err := dialect.ParseTarget("sqlite:"+filepath.Join(dir, "tpcc.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := &scenario.Env{Store: st, ToolVersion: "test", NoCrossCheck: true}
	if _, _, err := env.Build(ctx, db, tg, load.Options{Warehouses: 1, Workers: 1, Seed: 7, ToolVersion: "test"}); err != nil {
		t.Fatalf("build: %v", err)
	}
	return env, db, tg
}

func shortDriver() driver.Options {
	d := driver.Defaults()
	d.Rampup, d.Duration, d.Grace = 200*time.Millisecond, time.Second, time.Second
	d.Style = dialect.StyleClientSQL
	return d
}

func TestProfileStoresEveryRun(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	var stored []scenario.RunStored
	var notes []string
	env.Observer = scenario.Observer{
		RunStored: func(r scenario.RunStored) { stored = append(stored, r) },
		Note:      func(m string) { notes = append(notes, m) },
	}
	out, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{
		Label: "two-steps", Steps: []int{1, 2}, VUsSpec: "1,2", Repeat: 1, Driver: shortDriver(),
	})
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	if got, want := len(out.Runs), 2; got != want {
		t.Fatalf("runs: got %d, want %d", got, want)
	}
	if got, want := len(stored), 2; got != want {
		t.Fatalf("observed stored runs: got %d, want %d", got, want)
	}
	if got, want := len(notes), 2; got != want {
		t.Errorf("step notes: got %d (%q), want %d", got, notes, want)
	}
	p, err := env.Store.GetProfile(context.Background(), out.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.StatusOK || p.Label != "two-steps" {
		t.Errorf("profile: got status %s label %q, want ok two-steps", p.Status, p.Label)
	}
	for i, r := range stored {
		if r.Result.Options.VUs != i+1 {
			t.Errorf("run %d: got %d VUs, want %d", i, r.Result.Options.VUs, i+1)
		}
		if r.Result.DBNewOrders <= 0 {
			t.Errorf("run %d: no new orders measured", i)
		}
	}
}

func TestProfileInterruptedIsPartial(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.Observer = scenario.Observer{RunStored: func(scenario.RunStored) { cancel() }}
	out, err := env.Profile(ctx, db, tg, scenario.ProfileOptions{Steps: []int{1, 1, 1}, Repeat: 1, Driver: shortDriver()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("profile: got %v, want context.Canceled", err)
	}
	if len(out.Runs) != 1 {
		t.Errorf("runs: got %d, want 1 (stopped after the first)", len(out.Runs))
	}
	p, err := env.Store.GetProfile(context.Background(), out.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.StatusPartial {
		t.Errorf("profile status: got %s, want partial", p.Status)
	}
}

func TestProfileWithoutSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tg, _ := dialect.ParseTarget("sqlite:"+filepath.Join(dir, "empty.db"), "")
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	env := &scenario.Env{Store: st}
	_, err = env.Profile(ctx, db, tg, scenario.ProfileOptions{Steps: []int{1}, Repeat: 1, Driver: shortDriver()})
	if !errors.Is(err, scenario.ErrNoSchema) {
		t.Errorf("profile on an empty database: got %v, want ErrNoSchema", err)
	}
}

// TestProfileTPCCMode runs a tpc-c profile (inside a testing/synctest
// bubble, so its terminals key and think in fake time) and checks that the
// mode, the terminals and the spec verdict are recorded with the profile
// and its run.
func TestProfileTPCCMode(t *testing.T) {
	testenv.Require(t, testenv.Long)
	synctest.Test(t, func(t *testing.T) {
		env, db, tg := sqliteEnv(t)
		d := shortDriver()
		d.Mode, d.VUs = driver.ModeTPCC, 0
		d.Rampup, d.Duration, d.Grace = 30*time.Second, 3*time.Minute, 5*time.Second
		var stored []scenario.RunStored
		env.Observer = scenario.Observer{RunStored: func(r scenario.RunStored) { stored = append(stored, r) }}
		ctx := context.Background()
		out, err := env.Profile(ctx, db, tg, scenario.ProfileOptions{Label: "paced", Steps: []int{0}, VUsSpec: "", Repeat: 1, Driver: d})
		if err != nil {
			t.Fatalf("profile: %v", err)
		}
		p, err := env.Store.GetProfile(ctx, out.ID)
		if err != nil {
			t.Fatal(err)
		}
		var params map[string]any
		if err := json.Unmarshal(p.Params, &params); err != nil {
			t.Fatal(err)
		}
		if params["mode"] != "tpc-c" || fmt.Sprint(params["terminals"]) != "[10]" || params["vus"] != nil {
			t.Errorf("profile params: mode %v, terminals %v, vus %v; want tpc-c, [10], none", params["mode"], params["terminals"], params["vus"])
		}
		if len(stored) != 1 {
			t.Fatalf("stored runs: got %d, want 1", len(stored))
		}
		r, err := env.Store.GetRun(ctx, stored[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.VUs != 10 {
			t.Errorf("run users: got %d, want the 10 terminals", r.VUs)
		}
		var sum struct {
			Options driver.Options `json:"options"`
			Spec    *driver.Spec   `json:"spec"`
		}
		if err := json.Unmarshal(r.Summary, &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Options.Mode != driver.ModeTPCC || sum.Spec == nil || sum.Spec.Terminals != 10 {
			t.Errorf("stored summary: mode %v, spec %+v; want tpc-c with a verdict for 10 terminals", sum.Options.Mode, sum.Spec)
		}
	})
}

// TestProfileContinue: continuing an interrupted profile measures only the
// slots it lacks; a run left "running" by a dead process and a partial run
// are superseded, so every slot counts exactly once.
func TestProfileContinue(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env, db, tg := sqliteEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.Observer = scenario.Observer{RunStored: func(scenario.RunStored) { cancel() }}
	opts := scenario.ProfileOptions{Label: "c", Steps: []int{1, 2}, Repeat: 2, Driver: shortDriver()}
	var started int64
	opts.Started = func(_ context.Context, id int64) error { started = id; return nil }
	first, err := env.Profile(ctx, db, tg, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first attempt: got %v, want context.Canceled", err)
	}
	if started != first.ID {
		t.Errorf("Started saw profile %d, want %d", started, first.ID)
	}
	// A process that died in the middle of slot (step 2, repeat 1).
	dead, err := env.Store.CreateRun(context.Background(), store.Run{Kind: store.KindRun, ProfileID: first.ID, Step: 2, Repeat: 1, VUs: 2})
	if err != nil {
		t.Fatal(err)
	}

	var notes []string
	env.Observer = scenario.Observer{Note: func(m string) { notes = append(notes, m) }}
	opts.Continue = first.ID
	second, err := env.Profile(context.Background(), db, tg, opts)
	if err != nil {
		t.Fatalf("continue: %v", err)
	}
	if second.ID != first.ID {
		t.Errorf("continued profile %d, want %d", second.ID, first.ID)
	}
	if got, want := len(second.Runs), 3; got != want {
		t.Errorf("continue measured %d runs, want %d (4 slots, 1 already measured)", got, want)
	}
	runs, err := env.Store.ListRuns(context.Background(), store.RunFilter{ProfileID: first.ID, Counting: true})
	if err != nil {
		t.Fatal(err)
	}
	slots := map[[2]int]int{}
	for _, r := range runs {
		slots[[2]int{r.Step, r.Repeat}]++
		if r.Status != store.StatusOK {
			t.Errorf("counting run %d is %s, want ok", r.ID, r.Status)
		}
	}
	if len(runs) != 4 || len(slots) != 4 {
		t.Errorf("got %d counting runs over %d slots (%v), want 4 slots once each", len(runs), len(slots), slots)
	}
	d, err := env.Store.GetRun(context.Background(), dead)
	if err != nil {
		t.Fatal(err)
	}
	if d.Superseded == "" || d.Status != store.StatusFailed {
		t.Errorf("the dead process's run: got status %s superseded %q, want failed and superseded", d.Status, d.Superseded)
	}
	p, err := env.Store.GetProfile(context.Background(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.StatusOK {
		t.Errorf("continued profile status %s, want ok", p.Status)
	}
}
