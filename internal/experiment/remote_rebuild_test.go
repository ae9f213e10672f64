package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestRemoteRebuildCPULoopback: a rebuild step on a managed PostgreSQL that
// an agent on loopback (db1) runs: its agent restarts the server cold
// (the page cache dropped there) and reads the server's CPU time from its
// cgroups, the statement goes through the tunnel; the runner stores the
// cold and warm phases with the restart as timed on db1 and the
// placement; the agent holds nothing once the plan ends. A cpu step
// there runs the client loop on db1 and the server's CPU time from it.
func TestRemoteRebuildCPULoopback(t *testing.T) {
	testenv.Require(t, testenv.ManagedPostgres)
	const tok = "loopback-test-token-0123456789"
	dir := reachableDir(t)
	db1, dbAddr, dbFP := testAgent(t, tok, dir)
	tf := tokenFile(t, tok)
	p := decodeIn(t, t.TempDir(), `name: remote-rebuild
warehouses: 1
build: {workers: 2}
hosts:
  db1: {agent: "`+dbAddr+`", fingerprint: "`+dbFP+`", token_file: `+tf+`}
targets:
  - name: pg
    host: db1
    engine: postgres
    data_dir: `+filepath.Join(dir, "pg")+`
    memory: 32MB
    settings: {fsync: "off", synchronous_commit: "off"}
steps:
  - build
  - rebuild
  - profile: {vus: [1], rampup: 200ms, duration: 1s, grace: 1s}
  - cpu: {repeat: 2, server_iterations: 2000, client_iterations: 100000}
`)
	ctx := context.Background()
	if err := plan.Validate(ctx, p); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	st := openStore(t, t.TempDir())
	r := &Runner{Store: st, ToolVersion: "test", NoCrossCheck: true}
	id, err := r.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := db1.Running(); n != 0 {
		t.Errorf("after the plan db1 holds %d instances, want none", n)
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRebuild})
	if err != nil || len(runs) != 1 {
		t.Fatalf("rebuild runs: got %d (%v), want 1", len(runs), err)
	}
	run := runs[0]
	if run.Status != store.StatusOK {
		t.Fatalf("rebuild run: status %s %s", run.Status, run.Error)
	}
	var rc scenario.RunContext
	if err := json.Unmarshal(run.Context, &rc); err != nil {
		t.Fatal(err)
	}
	if h := rc.Placement.Hosts; h == nil || h.Database != "db1" || !strings.Contains(h.RTTNote, "by its agent") || h.RTTMicros <= 0 {
		t.Errorf("placement hosts %+v, want the database on db1, the restarts by its agent and a round trip", rc.Placement.Hosts)
	}
	var sum summary.Rebuild
	if err := json.Unmarshal(run.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	var cold, warm int
	for _, ph := range sum.Phases {
		if ph.Error != "" {
			t.Errorf("phase %s: %s", ph.Cache, ph.Error)
		}
		if ph.ServerCPUSeconds == nil {
			t.Errorf("phase %s: no server CPU time (the agent reads it)", ph.Cache)
		}
		switch ph.Cache {
		case summary.CacheCold:
			cold++
			if rs := ph.Restart; rs == nil || !rs.Cold || rs.StopSeconds <= 0 || rs.StartSeconds <= 0 {
				t.Errorf("cold phase: restart %+v, want one timed on db1", ph.Restart)
			}
			if !ph.CacheDropped {
				t.Errorf("cold phase: the page cache was not dropped on db1 (%+v)", ph.Restart)
			}
		case summary.CacheWarm:
			warm++
		}
	}
	if cold != 1 || warm != 1 {
		t.Errorf("phases: %d cold, %d warm, want 1 and 1", cold, warm)
	}
	if !sum.Monitor.DatabaseHostMeasured {
		t.Errorf("the database host was not measured by its agent")
	}
	// The profile after the restarts reached the restarted server through
	// the same forwarder.
	profiled, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindRun})
	if err != nil || len(profiled) != 1 || profiled[0].Status != store.StatusOK {
		t.Errorf("the profile after the rebuild: %d runs (%v), want 1 OK", len(profiled), err)
	}
	in, err := Report(ctx, st, id, report.Include{})
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	if m := strings.Join(in.Experiment.Method, "\n"); !strings.Contains(m, "page-cache drop") {
		t.Errorf("the report's method does not say where the restarts ran:\n%s", m)
	}

	cpus, err := st.ListRuns(ctx, store.RunFilter{ExperimentID: id, Kind: store.KindCPU})
	if err != nil || len(cpus) != 1 || cpus[0].Status != store.StatusOK {
		t.Fatalf("cpu runs: %d (%v), want 1 OK", len(cpus), err)
	}
	cs, err := summary.DecodeCPU(cpus[0].Summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cs.Client.Method, "on host db1") || len(cs.Client.Runs) != 2 || cs.Client.Runs[0].Rate <= 0 {
		t.Errorf("cpu client loop: %+v, want 2 runs on host db1", cs.Client)
	}
	if cs.Server == nil || len(cs.Server.Runs) != 2 || cs.Server.Runs[0].CPUSeconds == nil {
		t.Errorf("cpu server loop: %+v, want 2 runs with the server's CPU time read by the agent", cs.Server)
	}
	if cs.Monitor.DatabaseHost == nil {
		t.Errorf("the cpu step did not sample the database's host")
	}
	ac := agent.Client{Addr: dbAddr, Fingerprint: dbFP, Token: tok}
	if _, err := ac.CPULoop(ctx, agent.MaxCPULoopIterations+1); err == nil || !strings.Contains(err.Error(), "iterations") {
		t.Errorf("a loop over the agent's bound: %v, want refused", err)
	}

	// The endpoints: the token only, a known instance only.
	c := agent.Client{Addr: dbAddr, Fingerprint: dbFP, Token: tok}
	var re *agent.RemoteError
	if _, err := c.Restart(ctx, "none", true); !errors.As(err, &re) || re.Status != http.StatusNotFound {
		t.Errorf("restart of no instance: %v, want not found", err)
	}
	bad := agent.Client{Addr: dbAddr, Fingerprint: dbFP, Token: "wrong-token-0123456789"}
	if _, err := bad.Counters(ctx, "none"); !errors.As(err, &re) || re.Status != http.StatusUnauthorized {
		t.Errorf("counters with a wrong token: %v, want unauthorized", err)
	}
}
