package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// testAgent serves an agent on a loopback port until the test ends; it
// returns its server (to count what it holds) and its address.
func testAgent(t *testing.T, token string, allow ...string) (*agent.Server, string, string) {
	t.Helper()
	id, err := agent.EphemeralIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &agent.Server{Identity: &id, Token: token, AllowDirs: allow, Lease: 3 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, ln.Addr().String(), id.Fingerprint
}

func tokenFile(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRemotePlacementLoopback: a plan places a managed PostgreSQL on one
// agent (db1) and profiles it with the driver here and with the driver on
// another agent (lg1), both agents on this machine's loopback: every run
// records where the database and the driver ran and the round trip
// measured at its start; the report says so; the agents hold nothing once
// the plan ends.
func TestRemotePlacementLoopback(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	const tok = "loopback-test-token-0123456789"
	dir := reachableDir(t)
	db1, dbAddr, dbFP := testAgent(t, tok, dir)
	lg1, lgAddr, lgFP := testAgent(t, tok)
	tf := tokenFile(t, tok)
	src := `name: placement
warehouses: 1
build: {workers: 2}
hosts:
  db1: {agent: "` + dbAddr + `", fingerprint: "` + dbFP + `", token_file: ` + tf + `}
  lg1: {agent: "` + lgAddr + `", fingerprint: "` + lgFP + `", token_file: ` + tf + `}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: ` + filepath.Join(dir, "pg") + `
    memory: 32MB
    settings: {fsync: "off", synchronous_commit: "off"}
steps:
  - build
  - profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s}
  - profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s, driver: {host: lg1}}
  - profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s, driver: {host: db1}}
`
	p := decodeIn(t, t.TempDir(), src)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, t.TempDir())
	held := 0
	// The live reports of each profile's driver reach the runner's
	// observer, wherever the driver runs.
	var mu sync.Mutex
	driverHost, lives := "", map[string]int{}
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true, Observer: Observer{Unit: func(e UnitEvent) {
		if e.State == store.StepRunning {
			held += db1.Running()
			mu.Lock()
			driverHost = p.DriverHost(e.Unit.Step)
			if driverHost == "" {
				driverHost = "here"
			}
			mu.Unlock()
		}
	}, Scenario: scenario.Observer{Live: func(l driver.Live) {
		mu.Lock()
		defer mu.Unlock()
		if l.Elapsed > 0 {
			lives[driverHost]++
		}
	}}}}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if held == 0 {
		t.Errorf("the database agent held no instance while the steps ran")
	}
	if n, m := db1.Running(), lg1.Running(); n+m != 0 {
		t.Errorf("after the plan the agents hold %d and %d instances, want none", n, m)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs: got %d (%v), want 3", len(runs), err)
	}
	drivers := map[string]bool{}
	for _, run := range runs {
		var rc scenario.RunContext
		if err := json.Unmarshal(run.Context, &rc); err != nil {
			t.Fatal(err)
		}
		h := rc.Placement.Hosts
		if h == nil || h.Database != "db1" || h.DatabaseAgent != dbAddr || rc.Placement.Local {
			t.Errorf("run %d: placement %+v, want the database on db1 at %s", run.ID, rc.Placement, dbAddr)
			continue
		}
		if h.RTTMicros <= 0 && h.Driver != "db1" {
			t.Errorf("run %d: no round trip measured (%q)", run.ID, h.RTTNote)
		}
		drivers[h.Driver] = true
		if run.Status != store.StatusOK {
			t.Errorf("run %d (driver on %s): status %s %s", run.ID, h.Driver, run.Status, run.Error)
		}
	}
	if !drivers["here"] || !drivers["lg1"] || !drivers["db1"] {
		t.Errorf("drivers ran on %v, want here, lg1 and db1", drivers)
	}
	for _, h := range []string{"here", "lg1", "db1"} {
		if lives[h] == 0 {
			t.Errorf("no live report of the driver on %s reached the runner (%v)", h, lives)
		}
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	t.Logf("report method:\n%s", strings.Join(in.Experiment.Method, "\n"))
	js, _ := json.Marshal(in)
	if !strings.Contains(string(js), "driver on lg1") {
		t.Errorf("the report does not say the driver ran on lg1")
	}
}

// TestRemoteRefusals: a plan refuses remote targets that cannot work,
// before anything starts; an agent whose token the plan does not hold
// refuses to start the instance.
func TestRemoteRefusals(t *testing.T) {
	dir := t.TempDir()
	tf := tokenFile(t, "some-token-0123456789")
	base := "name: x\nwarehouses: 1\nhosts: {db1: {agent: \"10.0.0.5:7300\", fingerprint: \"sha256:" + strings.Repeat("ab", 32) + "\", token_file: " + tf + "}}\n"
	for _, c := range []struct{ name, src, want string }{
		{"unknown host", base + "targets: [{name: a, host: db2, engine: postgres, data_dir: /srv/a}]\nsteps: [build]\n", `no host named "db2"`},
		{"relative dir", base + "targets: [{name: a, host: db1, engine: postgres, data_dir: a}]\nsteps: [build]\n", "absolute path"},
		{"sqlite", base + "targets: [{name: a, host: db1, engine: sqlite, data_dir: /srv/a}]\nsteps: [build]\n", "embedded"},
		{"no fingerprint", "name: x\nwarehouses: 1\nhosts: {db1: {agent: \"10.0.0.5:7300\", token_file: t}}\ntargets: [{name: a, engine: postgres, data_dir: a}]\nsteps: [build]\n", "fingerprint"},
		{"driver host", base + "driver: {host: lg9}\ntargets: [{name: a, engine: postgres, data_dir: a}]\nsteps: [build]\n", `no host named "lg9"`},
	} {
		path := filepath.Join(dir, "plan.yaml")
		_, err := plan.Decode(path, []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, src string }{
		{"relative restore dir on a remote target", base + "targets: [{name: a, host: db1, engine: postgres, data_dir: /srv/a}]\nsteps: [storage, {backup: {to: /srv/b, restore_dir: r}}]\n"},
		{"relative backup dir on a remote target", base + "targets: [{name: a, host: db1, engine: postgres, data_dir: /srv/a}]\nsteps: [{backup: {to: b, restore: false}}]\n"},
		{"parallel on a remote target", base + "targets: [{name: a, host: db1, engine: postgres, data_dir: /srv/a}, {name: b, host: db1, engine: postgres, data_dir: /srv/b}]\nsteps: [build, parallel]\n"},
		{"remote driver, local instance", base + "driver: {host: db1}\ntargets: [{name: a, engine: postgres, data_dir: a}]\nsteps: [build, {profile: {vus: [1]}}]\n"},
		{"tpch with a remote driver", base + "driver: {host: db1}\ntargets: [{name: a, url: \"postgres://u@10.0.0.7/db\"}]\nsteps: [{tpch: {scale: 0.01}}]\n"},
		{"placeholder fingerprint", "name: x\nwarehouses: 1\nhosts: {db1: {agent: \"10.0.0.5:7300\", fingerprint: \"sha256:REPLACE-ME\", token_file: " + tf + "}}\ntargets: [{name: a, host: db1, engine: postgres, data_dir: /srv/a}]\nsteps: [build]\n"},
		{"missing token file", "name: x\nwarehouses: 1\nhosts: {db1: {agent: \"10.0.0.5:7300\", fingerprint: \"sha256:" + strings.Repeat("ab", 32) + "\", token_file: /nonexistent/t}}\ntargets: [{name: a, host: db1, engine: postgres, data_dir: /srv/a}]\nsteps: [build]\n"},
	} {
		p, err := plan.Decode(filepath.Join(dir, "plan.yaml"), []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := plan.Validate(context.Background(), p); err == nil {
			t.Errorf("%s: validated", c.name)
		} else if strings.HasSuffix(c.name, "on a remote target") && (!errors.Is(err, plan.ErrRemoteStep) || strings.Contains(err.Error(), "step storage")) {
			t.Errorf("%s: %v, want %v", c.name, err, plan.ErrRemoteStep)
		} else if c.name == "relative restore dir on a remote target" && !strings.Contains(err.Error(), "restore_dir") {
			t.Errorf("%s: %v, want the restore directory refused", c.name, err)
		} else if c.name == "tpch with a remote driver" && !strings.Contains(err.Error(), "runner's machine only") {
			t.Errorf("%s: %v, want the driver's placement refused", c.name, err)
		}
	}
}
