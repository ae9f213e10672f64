package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Remote is a target's managed instance on another host: started by that
// host's agent, kept alive by this runner's lease, reached through a
// forwarder on this machine's loopback that tunnels to the agent.
type Remote struct {
	Host   *plan.HostSpec
	Client agent.Client
	Info   agent.InstanceInfo // its URL on the agent's host; Password and Ticket secrets
	// secret is told the secrets of what the agent starts for this
	// target later (a restored copy's password and ticket), for
	// scrubbing; never nil.
	secret func(string)

	mu        sync.Mutex
	outages   []string  // lease renewals and tunnels that failed
	failing   time.Time // since when renewals fail (zero: they succeed)
	gone      chan struct{}
	goneWhy   string
	goneClose sync.Once
}

// lost records that the agent did not answer.
func (r *Remote) lost(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outages = append(r.outages, time.Now().UTC().Format(time.TimeOnly)+" "+err.Error())
}

// renewed records a renewal of the lease: a failure is an outage; once
// renewals have failed for a whole lease, the instance is gone (its agent
// stopped it when the lease lapsed, or died with it): Gone is closed.
func (r *Remote) renewed(err error, log *slog.Logger) {
	if err == nil {
		r.mu.Lock()
		if !r.failing.IsZero() {
			log.Info("the agent answers again", "host", r.Host.Name)
		}
		r.failing = time.Time{}
		r.mu.Unlock()
		return
	}
	r.lost(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.failing.IsZero() {
		r.failing = now
		log.Warn("the agent did not renew the instance's lease", "host", r.Host.Name, "err", err)
	}
	var re *agent.RemoteError
	if now.Sub(r.failing) >= r.Info.Lease || errors.As(err, &re) && re.Status == http.StatusNotFound {
		r.goneClose.Do(func() {
			r.goneWhy = fmt.Sprintf("the instance on host %s is gone: its agent at %s has not renewed its lease since %s (%v)",
				r.Host.Name, r.Client.Addr, r.failing.UTC().Format(time.TimeOnly), err)
			close(r.gone)
		})
	}
}

// Gone is closed when the instance is known gone; Why says why.
func (r *Remote) Gone() <-chan struct{} { return r.gone }

// Why is why the instance is gone ("" while it is not).
func (r *Remote) Why() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.goneWhy
}

// Outages are the failures to reach the agent so far.
func (r *Remote) Outages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.outages...)
}

// via is the instance as a driver on another agent reaches it: through
// this agent's tunnel, with the instance's ticket.
func (r *Remote) via() *agent.Via {
	return &agent.Via{Addr: r.Client.Addr, Fingerprint: r.Client.Fingerprint, Ticket: r.Info.Ticket, Instance: r.Info.ID}
}

// hostClient is the client of a plan's host, its token read now.
func hostClient(h *plan.HostSpec) (agent.Client, error) {
	tok, err := agent.ReadToken(h.TokenFile)
	if err != nil {
		return agent.Client{}, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return agent.Client{Addr: h.Agent, Fingerprint: h.Fingerprint, Token: tok}, nil
}

// runnerName names this runner to the agents, for their logs.
func runnerName() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", h, os.Getpid())
}

// startRemote asks the target's host's agent to start its instance and
// opens a forwarder to it. The lease is renewed until the target stops;
// when this runner dies, the agent stops the instance itself once the
// lease lapses (agent.DefaultLease).
func startRemote(ctx context.Context, t *plan.TargetSpec, log *slog.Logger, secret func(string)) (*Running, error) {
	c, err := hostClient(t.Agent)
	if err != nil {
		return nil, err
	}
	if secret != nil {
		secret(c.Token)
	}
	info, err := c.Start(ctx, agent.StartRequest{Spec: t.Instance, Runner: runnerName()})
	if err != nil {
		return nil, err
	}
	if secret != nil {
		secret(info.Password)
		secret(info.Ticket)
	}
	rm := &Remote{Host: t.Agent, Client: c, Info: info, gone: make(chan struct{}), secret: secret}
	if rm.secret == nil {
		rm.secret = func(string) {}
	}
	life, endLease := context.WithCancel(context.WithoutCancel(ctx))
	go c.KeepLease(life, info.ID, info.Lease, func(err error) { rm.renewed(err, log) })
	stopRemote := func(ctx context.Context) error {
		endLease()
		if err := c.Stop(ctx, info.ID); err != nil {
			return fmt.Errorf("stop the instance on host %s: %w (its agent stops it itself once this runner's lease lapses, %s)", t.Host, err, info.Lease)
		}
		return nil
	}
	f, err := c.Forward(info.ID)
	if err != nil {
		return nil, fmt.Errorf("%w; %w", err, stopRemote(context.WithoutCancel(ctx)))
	}
	f.Lost = rm.lost
	u, err := url.Parse(info.URL)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the agent's URL of the instance: %w; %w", err, stopRemote(context.WithoutCancel(ctx)))
	}
	u.Host = f.Addr()
	tg, err := dialect.ParseTarget(u.String(), "")
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the agent's URL of the instance: %w; %w", err, stopRemote(context.WithoutCancel(ctx)))
	}
	tg.Password, tg.PasswordSet = dialect.Secret(info.Password), true
	tg.Env = dialect.Env{Logger: log}
	return &Running{Spec: t, Target: tg, Instance: info.Description, Remote: rm, Server: &remoteServer{rm: rm, target: tg},
		stop: func(ctx context.Context) error {
			f.Close()
			return stopRemote(ctx)
		}}, nil
}

// remoteServer is a remote target's server as a step restarts it and
// reads its counters: through the fixed endpoints of its agent, which
// restarts it (and drops its host's page cache) and reads its cgroups
// there. Its target stays the forwarder's, which reaches the restarted
// server too.
type remoteServer struct {
	rm     *Remote
	target dialect.Target
}

var (
	_ scenario.Server = (*remoteServer)(nil)
	_ interface {
		IOCounters() (map[string]instance.IOCounters, error)
	} = (*remoteServer)(nil)
)

// countersTimeout bounds a read of the counters through the agent.
const countersTimeout = time.Minute

func (s *remoteServer) Restart(ctx context.Context, cold bool) (instance.RestartReport, error) {
	rep, err := s.rm.Client.Restart(ctx, s.rm.Info.ID, cold)
	if err == nil && rep.Note != "" {
		rep.Note += " (on host " + s.rm.Host.Name + ")"
	}
	return rep, err
}

func (s *remoteServer) counters() (agent.Counters, error) {
	ctx, cancel := context.WithTimeout(context.Background(), countersTimeout)
	defer cancel()
	return s.rm.Client.Counters(ctx, s.rm.Info.ID)
}

func (s *remoteServer) ServerCPUSeconds() (float64, error) {
	c, err := s.counters()
	if err != nil {
		return 0, err
	}
	if c.CPUError != "" {
		return 0, fmt.Errorf("on host %s: %s", s.rm.Host.Name, c.CPUError)
	}
	return c.CPUSeconds, nil
}

func (s *remoteServer) IOCounters() (map[string]instance.IOCounters, error) {
	c, err := s.counters()
	if err != nil {
		return nil, err
	}
	if c.IOError != "" {
		return nil, fmt.Errorf("on host %s: %s", s.rm.Host.Name, c.IOError)
	}
	return c.IO, nil
}

func (s *remoteServer) Target() dialect.Target { return s.target }

// placeUnit sets what env needs when the unit's target or driver runs
// on another host: the database host's metrics from its agent, where
// each ran, the round trip at the start of every run, and the driver on
// its host's agent.
func placeUnit(p *plan.Plan, u plan.Unit, running []*Running, env *scenario.Env) error {
	if !p.Remote() {
		return nil
	}
	rt := running[0]
	h := &scenario.Hosts{Database: "here", Driver: "here"}
	if rm := rt.Remote; rm != nil {
		h.Database, h.DatabaseAgent = rm.Host.Name, rm.Client.Addr
		env.Agent = rm.Client
		env.Lost, env.LostWhy = rm.Gone(), rm.Why
	}
	dh := p.DriverHost(u.Step)
	if dh == "" {
		env.Hosts = h
		if rm := rt.Remote; rm != nil {
			env.MeasureRTT = func(ctx context.Context) (time.Duration, error) { return rm.Client.RTT(ctx, 5) }
		}
		return nil
	}
	if len(running) != 1 {
		return fmt.Errorf("step %s: a driver on host %s drives one target at a time (not a step over several targets)", u.Step.Kind.Name, dh)
	}
	lg, err := hostClient(p.Hosts[dh])
	if err != nil {
		return err
	}
	h.Driver, h.DriverAgent = dh, lg.Addr
	env.Hosts = h
	req := agent.DriveRequest{}
	switch rm := rt.Remote; {
	case rm != nil:
		req.URL, req.Password = rm.Info.URL, rm.Info.Password
		if rm.Host.Name != dh {
			req.Via = rm.via()
			env.MeasureRTT = func(ctx context.Context) (time.Duration, error) { return lg.RTTTo(ctx, *req.Via) }
		} else {
			h.RTTNote = "the driver ran on the database's host"
		}
	default:
		tg := rt.Target
		req.URL, req.Password = tg.URL.String(), tg.Password.Reveal()
		h.RTTNote = "not measured: the database is reached at its URL, with no agent beside it"
	}
	env.Drive = func(ctx context.Context, meta tpcc.Meta, d driver.Options, live func(driver.Live)) (*driver.Result, error) {
		r := req
		r.Meta = meta
		d.Recorder, d.Start = nil, nil // they stay here
		r.Options = d
		return lg.Drive(ctx, r, live)
	}
	return nil
}

// outages are the failures to reach the agents of running targets.
func outages(running []*Running) []string {
	var out []string
	for _, rt := range running {
		if rt.Remote != nil {
			out = append(out, rt.Remote.Outages()...)
		}
	}
	return out
}

// placementLines say, for a plan that spanned machines, where each
// step's runs ran: the database's host, the driver's, and the round trip
// between them measured at the start of each run (median, range).
func (rc *ReportContext) placementLines() []string {
	type key struct {
		seq    int
		target string
	}
	type where struct {
		hosts scenario.Hosts
		rtts  []int64
	}
	var order []key
	seen := map[key]*where{}
	for _, r := range rc.runs {
		if r.Kind != store.KindRun && r.Kind != store.KindStorage && r.Kind != store.KindBackup && r.Kind != store.KindRebuild && r.Kind != store.KindCPU {
			continue
		}
		var c struct {
			Placement  scenario.Placement          `json:"placement"`
			Experiment *scenario.ExperimentContext `json:"experiment"`
		}
		if json.Unmarshal(r.Context, &c) != nil || c.Placement.Hosts == nil {
			continue
		}
		k := key{seq: r.ExperimentSeq}
		if c.Experiment != nil {
			k.target = c.Experiment.Target
		}
		w := seen[k]
		if w == nil {
			w = &where{hosts: *c.Placement.Hosts}
			seen[k] = w
			order = append(order, k)
		}
		if c.Placement.Hosts.RTTMicros > 0 {
			w.rtts = append(w.rtts, c.Placement.Hosts.RTTMicros)
		}
	}
	if len(order) == 0 {
		return nil
	}
	sort.Slice(order, func(i, j int) bool { return order[i].seq < order[j].seq })
	out := []string{"Where it ran (hosts of the plan; \"here\" is the machine that ran the plan):"}
	for _, k := range order {
		w := seen[k]
		h := w.hosts
		h.RTTMicros = 0
		line := fmt.Sprintf("schedule %d, target %s: %s", k.seq, k.target, h.String())
		if len(w.rtts) > 0 {
			slices.Sort(w.rtts)
			line += fmt.Sprintf("; round trip between the driver's host and the database's at the start of each run: median %.3f ms (%.3f-%.3f, %d runs)",
				float64(w.rtts[len(w.rtts)/2])/1000, float64(w.rtts[0])/1000, float64(w.rtts[len(w.rtts)-1])/1000, len(w.rtts))
		}
		out = append(out, line)
	}
	return out
}
