package scenario_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// TestCPU: the calibration runs the fixed loop in the server and the
// client, each repeat, checks the server's work against the reference,
// stores it, and later results on this host carry it in their context.
func TestCPU(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env := &scenario.Env{Store: st, ToolVersion: "test", NoCrossCheck: true}
	db, tg := emptySQLite(t)

	before := env.GatherContext(ctx, nil, dialect.Target{}, nil)
	if before.Calibration != nil {
		t.Errorf("context before any calibration: %+v, want none", before.Calibration)
	}
	const server, client = 3000, 200000
	out, err := env.CPU(ctx, db, tg, scenario.CPUOptions{Label: "c", Repeat: 3, ServerIterations: server, ClientIterations: client})
	if err != nil {
		t.Fatalf("cpu: %v", err)
	}
	if out.Status != store.StatusOK || out.Server == nil {
		t.Fatalf("status %s, server %+v: want ok with a server side", out.Status, out.Server)
	}
	wantX, wantS := dialect.CalibrationWork(client)
	for _, side := range []struct {
		name       string
		s          summary.CPUSide
		iterations int64
	}{{"server", *out.Server, server}, {"client", out.Client, client}} {
		if side.s.Iterations != side.iterations || len(side.s.Runs) != 3 || side.s.Rate.N != 3 || side.s.Rate.Mean <= 0 || side.s.Method == "" {
			t.Errorf("%s: %d rounds, %d runs, rate %+v, method %q: want %d rounds, 3 runs, a positive rate, a method",
				side.name, side.s.Iterations, len(side.s.Runs), side.s.Rate, side.s.Method, side.iterations)
		}
		for i, r := range side.s.Runs {
			if r.Repeat != i+1 || r.Seconds <= 0 || r.Rate <= 0 {
				t.Errorf("%s run %d: %+v, want repeat %d, positive time and rate", side.name, i, r, i+1)
			}
		}
	}
	if r := out.Client.Runs[0]; r.X != wantX || r.S != wantS || r.CPUSeconds == nil || out.Client.CPURate == nil {
		t.Errorf("client run %+v, CPU rate %v: want x %d s %q and its thread's CPU time", r, out.Client.CPURate, wantX, wantS)
	}

	after := env.GatherContext(ctx, nil, dialect.Target{}, nil)
	c := after.Calibration
	if c == nil || c.RunID != out.RunID || c.ClientRate != out.Client.Rate.Mean || c.ServerRate != out.Server.Rate.Mean || c.Dialect != "sqlite" {
		t.Errorf("context after the calibration: %+v, want run %d with its rates", c, out.RunID)
	}

	// The client alone, without a database.
	alone, err := env.CPU(ctx, nil, dialect.Target{}, scenario.CPUOptions{Repeat: 1, ClientIterations: 1000})
	if err != nil || alone.Server != nil || len(alone.Client.Runs) != 1 {
		t.Errorf("client alone: server %+v, %d client runs, %v; want no server and one run", alone.Server, len(alone.Client.Runs), err)
	}
	if c := env.GatherContext(ctx, nil, dialect.Target{}, nil).Calibration; c == nil || c.RunID != alone.RunID || c.ServerRate != 0 {
		t.Errorf("context after the client-only calibration: %+v, want run %d without a server rate", c, alone.RunID)
	}

	for _, tc := range []struct {
		name string
		o    scenario.CPUOptions
	}{
		{"repeat 0", scenario.CPUOptions{Repeat: 0}},
		{"negative client iterations", scenario.CPUOptions{Repeat: 1, ClientIterations: -1}},
		{"negative server iterations", scenario.CPUOptions{Repeat: 1, ServerIterations: -1}},
		{"too many client iterations", scenario.CPUOptions{Repeat: 1, ClientIterations: scenario.MaxClientIterations + 1}},
		{"too many server iterations", scenario.CPUOptions{Repeat: 1, ServerIterations: 1 << 41}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := env.CPU(ctx, db, tg, tc.o); !errors.Is(err, scenario.ErrInvalidOptions) || out.RunID != 0 {
				t.Errorf("got run %d, %v; want nothing stored and ErrInvalidOptions", out.RunID, err)
			}
		})
	}
}
