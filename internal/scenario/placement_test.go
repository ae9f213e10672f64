package scenario_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

func TestPlace(t *testing.T) {
	// An address of this machine other than loopback, when it has one.
	var own string
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				own = n.IP.String()
				break
			}
		}
	}
	cases := []struct {
		target string
		local  bool
	}{
		{"sqlite:/tmp/x.db", true},
		{"postgres://u@127.0.0.1:5432/db", true},
		{"postgres://u@[::1]:5432/db", true},
		{"mysql://u@localhost:3306/db", true},
		{"postgres://u@/db?host=/var/run/postgresql", true},
		{"mysql://u@h/db?socket=/run/mysqld/mysqld.sock", true},
		{"postgres://u@192.0.2.10:5432/db", false}, // TEST-NET-1: never this machine
		{"mysql://u@db.invalid:3306/db", false},    // cannot resolve
	}
	if own != "" {
		cases = append(cases, struct {
			target string
			local  bool
		}{"postgres://u@" + own + ":5432/db", true})
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			tg, err := dialect.ParseTarget(c.target, "")
			if err != nil {
				t.Fatal(err)
			}
			p := scenario.Place(context.Background(), tg, nil)
			if p.Local != c.local {
				t.Errorf("Place(%s) = local %v (%s), want %v", c.target, p.Local, p.Why, c.local)
			}
			if !c.local && !strings.Contains(p.HostRole(), "not measured") {
				t.Errorf("host role of a remote database: %q", p.HostRole())
			}
		})
	}
}

// TestRemoteDatabaseHostNotMeasured: with the database on another machine
// the host figures were still called the database's ("the data device
// (vda)"). The run's context says where the database is, and its host
// figures say they are the load generator's, with no data device marked.
// The server is on loopback; the address test is made to say it is not
// this machine.
func TestRemoteDatabaseHostNotMeasured(t *testing.T) {
	tg := dbtest.Postgres(t)
	env, db := builtEnv(t, tg)
	env.IsLocalAddress = func(net.IP) bool { return false }
	var stored []scenario.RunStored
	env.Observer.RunStored = func(r scenario.RunStored) { stored = append(stored, r) }
	d := shortDriver()
	d.Duration = 2 * time.Second
	if _, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1}, Repeat: 1, Driver: d}); err != nil {
		t.Fatalf("profile: %v", err)
	}
	if len(stored) != 1 || stored[0].Monitor == nil {
		t.Fatalf("no sampled run stored")
	}
	m := stored[0].Monitor
	if m.DatabaseHostMeasured || !strings.Contains(m.HostRole, "load generator") || m.DatabaseAddress != "127.0.0.1" {
		t.Errorf("host figures: measured %v, role %q, address %q: want the load generator's, database at 127.0.0.1",
			m.DatabaseHostMeasured, m.HostRole, m.DatabaseAddress)
	}
	for _, dev := range m.Devices {
		for _, r := range dev.Roles {
			if r == "data" {
				t.Errorf("device %s marked as the data device of a database on another machine", dev.Device)
			}
		}
	}
	run, err := env.Store.GetRun(context.Background(), stored[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(run.Context), `"placement":{"local":false,"address":"127.0.0.1"`) {
		t.Errorf("stored context does not place the database on another machine: %s", run.Context)
	}
}

// TestAgentMeasuresDatabaseHost: with the database on another machine
// and an oltplab agent running there, the run records that host's
// figures as the database host's. The agent runs on loopback; the address
// test is made to say the server is not this machine.
func TestAgentMeasuresDatabaseHost(t *testing.T) {
	tg := dbtest.Postgres(t)
	env, db := builtEnv(t, tg)
	env.IsLocalAddress = func(net.IP) bool { return false }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&agent.Server{}).Serve(ctx, ln) }()
	defer func() { stop(); <-served }()
	env.Agent = agent.Client{Addr: ln.Addr().String()}

	var stored []scenario.RunStored
	env.Observer.RunStored = func(r scenario.RunStored) { stored = append(stored, r) }
	d := shortDriver()
	d.Duration = 3 * time.Second
	if _, err := env.Profile(context.Background(), db, tg, scenario.ProfileOptions{Steps: []int{1}, Repeat: 1, Driver: d}); err != nil {
		t.Fatalf("profile: %v", err)
	}
	if len(stored) != 1 || stored[0].Monitor == nil {
		t.Fatalf("no sampled run stored")
	}
	m := stored[0].Monitor
	if m.DatabaseHost == nil || m.DatabaseHost.Seconds == 0 || m.Agent != env.Agent.Addr || !m.DatabaseHostMeasured {
		t.Fatalf("database host not measured by the agent: %+v (warnings %q)", m.DatabaseHost, m.Warnings)
	}
	if !strings.Contains(m.HostRole, "measured by oltplab agent at "+env.Agent.Addr) {
		t.Errorf("host role %q does not name the agent", m.HostRole)
	}
	if len(m.AgentRoles) == 0 {
		t.Errorf("the agent marked no device under the server's data directory")
	}
	samples, err := env.Store.Samples(context.Background(), stored[0].ID, store.SampleFilter{Source: store.SourceDBHost})
	if err != nil || len(samples) == 0 {
		t.Errorf("no db_host samples stored (%v)", err)
	}
}
