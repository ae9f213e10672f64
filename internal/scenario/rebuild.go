package scenario

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Server is a database server a scenario may restart and whose CPU time
// it may read: a managed instance.
type Server interface {
	// Restart stops and starts the server; cold empties the caches in
	// between (the report says whether the OS page cache was dropped).
	Restart(ctx context.Context, cold bool) (instance.RestartReport, error)
	// ServerCPUSeconds is the CPU time the server's processes used so
	// far; instance.ErrEmbedded for an engine without a server process.
	ServerCPUSeconds() (float64, error)
	// Target is where the server is reached (after a restart too).
	Target() dialect.Target
}

var _ Server = (*instance.Instance)(nil)

// ioCounter is a Server that counts its own block I/O by device (a
// managed instance in an I/O cgroup).
type ioCounter interface {
	IOCounters() (map[string]instance.IOCounters, error)
}

var _ ioCounter = (*instance.Instance)(nil)

// RebuildOptions describe an index rebuild: the largest index of
// ORDER-LINE (or all of its indexes), after a cold restart and again
// warm, Repeat times.
type RebuildOptions struct {
	Label string
	// AllIndexes rebuilds every index of ORDER-LINE instead of the largest.
	AllIndexes bool
	// Cold precedes each warm rebuild by one after a cold restart of
	// Server. Without a Server the cache cannot be emptied: the rebuild
	// is measured warm only, and the result says so.
	Cold bool
	// Repeat is how many times the cold and warm pair (or the warm
	// rebuild alone) runs; at least 1.
	Repeat int
	// Server, when not nil, is the managed instance holding the
	// database: it is restarted for a cold cache, and its CPU time is
	// measured around each rebuild. The database is reopened from its
	// target after each restart.
	Server Server
	// DataDir is the database's directory on this host, whose device the
	// host sampler watches; empty: the target's own when it is local.
	DataDir string
	// Remote: Server runs on another host (a plan's target on an agent):
	// that host, sampled by Env.Agent with RemoteDataDir's device marked,
	// is the one each phase's host figures describe.
	Remote        bool
	RemoteDataDir string
}

// Validate checks the options.
func (o RebuildOptions) Validate() error {
	if o.Repeat < 1 {
		return fmt.Errorf("%w: repeat must be at least 1, got %d", ErrInvalidOptions, o.Repeat)
	}
	return nil
}

// RebuildOutcome is a stored rebuild: its summary and where it is.
type RebuildOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	summary.Rebuild
}

// Rebuild rebuilds the largest index of ORDER-LINE (or all of its
// indexes) as o describes, as one stored run of kind rebuild with the
// host samples and each phase's window, and returns what it stored. The
// returned error is the rebuild's (wrapping context.Canceled when
// interrupted; a *RunError when a rebuild or restart failed after the run
// was stored) or the store's (*StoreError); RunID is 0 when nothing was
// stored.
func (e *Env) Rebuild(ctx context.Context, db dialect.Database, tg dialect.Target, o RebuildOptions) (RebuildOutcome, error) {
	if err := o.Validate(); err != nil {
		return RebuildOutcome{}, err
	}
	if _, ok := db.(dialect.IndexRebuilder); !ok {
		return RebuildOutcome{}, &UnsupportedError{What: "rebuild indexes", Dialect: db.Name()}
	}
	meta, err := ReadSchema(ctx, db, tg)
	if err != nil {
		return RebuildOutcome{}, err
	}
	table := tpcc.OrderLine
	indexes, err := db.(dialect.IndexRebuilder).Indexes(ctx, table)
	if err != nil {
		return RebuildOutcome{}, fmt.Errorf("list the indexes of %s in %s: %w", table, tg, err)
	}
	if len(indexes) == 0 {
		return RebuildOutcome{}, fmt.Errorf("%s in %s has no index to rebuild: %w", table, tg, ErrIncompleteSchema)
	}
	sum := summary.Rebuild{Table: table.String(), AllIndexes: o.AllIndexes, Indexes: indexes}
	if !o.AllIndexes {
		sum.Index = indexes[0].Name
	}
	if o.Cold && o.Server == nil {
		sum.Notes = append(sum.Notes, "cold cache is not possible on a target oltplab does not manage: measured warm only")
		o.Cold = false
	}
	cpu := e.rebuildCPU(o.Server, &sum)

	rc := e.GatherContext(ctx, db, tg, &meta)
	dir := o.DataDir
	if dir == "" {
		dir = rc.DataDir()
	}
	params := map[string]any{"table": table.String(), "all_indexes": o.AllIndexes, "cold": o.Cold, "repeat": o.Repeat,
		"managed": o.Server != nil, "warehouses": meta.Warehouses}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindRebuild, Label: o.Label, Target: tg.String(), Dialect: db.Name(),
		ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq, Params: JSON(params), Context: JSON(rc)})
	if err != nil {
		return RebuildOutcome{}, storeErr("record the rebuild", err)
	}
	what := "index " + sum.Index
	if o.AllIndexes {
		what = "every index"
	}
	e.note("rebuilding %s of %s (%s), %d time(s)%s", what, table, formatSize(sizeOf(indexes, sum.Index)), o.Repeat,
		map[bool]string{true: ", each after a cold restart and again warm", false: ", warm"}[o.Cold])
	for _, n := range sum.Notes {
		e.note("note: %s", n)
	}

	t0 := time.Now()
	dirs := map[string]string{}
	if dir != "" {
		dirs["data"] = dir
	}
	// The host only: the database's own sampler would lose its connection
	// at every restart.
	so := sampler.Options{Start: t0, Interval: time.Second, Dirs: dirs, OwnIO: e.OwnIO, Logger: e.logger()}
	if e.Agent.Addr != "" {
		so.Agent = e.Agent
		if o.RemoteDataDir != "" {
			so.AgentDirs = map[string]string{"data": o.RemoteDataDir}
		}
	}
	s := sampler.Start(ctx, so)
	r := rebuilder{env: e, db: db, o: o, cpu: cpu, t0: t0, sum: &sum}
	runErr := r.run(ctx)
	r.close()
	m, samples := StopSampling(s, time.Since(t0), rc.Placement)
	phaseSamples := samples
	if o.Remote {
		phaseSamples = dbHostSamples(samples) // the server rebuilt there
	}
	for i := range sum.Phases {
		w := sum.Phases[i].Window
		sum.Phases[i].Host = sampler.Summarize(phaseSamples, time.Duration(w.FromMillis)*time.Millisecond, time.Duration(w.ToMillis)*time.Millisecond)
	}
	sum.Cold, sum.Warm = spreadOf(sum.Phases, summary.CacheCold), spreadOf(sum.Phases, summary.CacheWarm)
	sum.Notes = append(sum.Notes, checkPhases(sum.Phases, driver.DefaultMaxForeignCPUPct)...)
	sum.Monitor = m
	sum.Interrupted = ctx.Err() != nil

	finished := slices.ContainsFunc(sum.Phases, func(p summary.RebuildPhase) bool { return p.Error == "" })
	status := summary.Status(summary.Facts{Measured: finished, Failed: runErr != nil})
	errText := ""
	if runErr != nil {
		errText = e.scrub(runErr.Error())
		if sum.Interrupted {
			errText = "interrupted"
		}
	}
	out := RebuildOutcome{RunID: id, Status: status, Rebuild: sum}
	// What was measured is kept whatever the store does (Env.complete).
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return out, &RunError{RunID: id, Status: status, Err: runErr}
	}
	return out, runErr
}

// cpuClock reads a CPU time in seconds.
type cpuClock func() (float64, error)

// cpuTimer is a server whose processes' CPU time can be read (a Server).
type cpuTimer interface {
	ServerCPUSeconds() (float64, error)
}

// serverCPUClock chooses whose CPU time stands for the server's: the
// managed server's processes, or oltplab's own process when the engine is
// embedded in it; none without a managed instance (clock nil, and a note
// that says why). source says which it is.
func serverCPUClock(srv cpuTimer) (clock cpuClock, source, note string) {
	if srv == nil {
		return nil, "", "server CPU time is measured on managed instances only"
	}
	if _, err := srv.ServerCPUSeconds(); errors.Is(err, instance.ErrEmbedded) {
		if _, ok := sysstat.ProcessCPUTime(); !ok {
			return nil, "", "the engine is embedded and this system does not report process CPU time"
		}
		return func() (float64, error) {
			d, _ := sysstat.ProcessCPUTime()
			return d.Seconds(), nil
		}, "oltplab's own process (the engine is embedded in it)", ""
	}
	return srv.ServerCPUSeconds, "the managed server's processes (its cgroup, or /proc)", ""
}

// rebuildCPU chooses whose CPU time a rebuild measures (serverCPUClock).
func (e *Env) rebuildCPU(srv Server, sum *summary.Rebuild) cpuClock {
	var t cpuTimer
	if srv != nil {
		t = srv
	}
	clock, source, note := serverCPUClock(t)
	if note != "" {
		if srv == nil {
			note += ": elapsed time alone"
		}
		sum.Notes = append(sum.Notes, note)
	}
	sum.CPUSource = source
	return clock
}

// rebuilder runs the phases of one rebuild.
type rebuilder struct {
	env   *Env
	db    dialect.Database // the database in use
	owned dialect.Database // opened after a restart; closed by close
	o     RebuildOptions
	cpu   cpuClock
	t0    time.Time
	sum   *summary.Rebuild
}

func (r *rebuilder) run(ctx context.Context) error {
	for rep := 1; rep <= r.o.Repeat; rep++ {
		caches := []string{summary.CacheWarm}
		if r.o.Cold {
			caches = []string{summary.CacheCold, summary.CacheWarm}
		}
		for _, cache := range caches {
			if err := ctx.Err(); err != nil {
				return err
			}
			if r.o.Repeat > 1 {
				r.env.note("repeat %d/%d: %s", rep, r.o.Repeat, cache)
			} else {
				r.env.note("%s", cache)
			}
			p, err := r.phase(ctx, rep, cache)
			r.sum.Phases = append(r.sum.Phases, p)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// phase runs one rebuild, after a cold restart for summary.CacheCold.
func (r *rebuilder) phase(ctx context.Context, rep int, cache string) (summary.RebuildPhase, error) {
	p := summary.RebuildPhase{Repeat: rep, Cache: cache, SizeAfterBytes: -1}
	fail := func(err error) (summary.RebuildPhase, error) {
		p.Error = r.env.scrub(err.Error())
		return p, err
	}
	if cache == summary.CacheCold {
		rr, err := r.o.Server.Restart(ctx, true)
		p.Restart, p.CacheDropped = storedRestart(rr), rr.CacheDropped
		if err != nil {
			return fail(fmt.Errorf("cold restart: %w", err))
		}
		if !rr.CacheDropped {
			r.env.note("note: %s: only the server's own cache is cold", rr.Note)
		}
		if err := r.reopen(ctx); err != nil {
			return fail(err)
		}
	}
	ir := r.db.(dialect.IndexRebuilder)
	io0, ioOK := r.serverIO()
	var cpu0 float64
	if r.cpu != nil {
		var err error
		if cpu0, err = r.cpu(); err != nil {
			return fail(fmt.Errorf("read the server's CPU time: %w", err))
		}
	}
	start := time.Now()
	stopProgress := r.env.stillRunning(cache+": still rebuilding", start)
	var rb dialect.Rebuild
	var err error
	if r.o.AllIndexes {
		rb, err = ir.RebuildIndexes(ctx, tpcc.OrderLine)
	} else {
		rb, err = ir.RebuildIndex(ctx, tpcc.OrderLine, r.sum.Index)
	}
	end := time.Now()
	stopProgress()
	p.ElapsedSeconds = end.Sub(start).Seconds()
	p.Window = summary.SpanOf(r.t0, start, end)
	if err != nil {
		return fail(fmt.Errorf("rebuild %s: %w", tpcc.OrderLine, err))
	}
	r.sum.Rebuild = rb
	if r.cpu != nil {
		cpu1, err := r.cpu()
		if err != nil {
			return fail(fmt.Errorf("read the server's CPU time: %w", err))
		}
		c := cpu1 - cpu0
		w := p.ElapsedSeconds - c
		p.ServerCPUSeconds, p.WaitSeconds = &c, &w
	}
	if io1, ok := r.serverIO(); ok && ioOK {
		p.ServerIO = &sampler.IOCount{ReadIOs: io1.ReadIOs - io0.ReadIOs, WriteIOs: io1.WriteIOs - io0.WriteIOs,
			ReadBytes: io1.ReadBytes - io0.ReadBytes, WriteBytes: io1.WriteBytes - io0.WriteBytes}
	}
	if ixs, err := ir.Indexes(ctx, tpcc.OrderLine); err == nil {
		p.SizeAfterBytes = sizeOf(ixs, r.sum.Index)
	}
	msg := fmt.Sprintf("  %s: %.2f s elapsed", cache, p.ElapsedSeconds)
	if p.ServerCPUSeconds != nil {
		msg += fmt.Sprintf(", %.2f s server CPU, %.2f s waiting", *p.ServerCPUSeconds, *p.WaitSeconds)
	}
	if p.ServerIO != nil {
		msg += fmt.Sprintf("; the server read %.1f MB in %d requests, wrote %.1f MB in %d",
			float64(p.ServerIO.ReadBytes)/1e6, p.ServerIO.ReadIOs, float64(p.ServerIO.WriteBytes)/1e6, p.ServerIO.WriteIOs)
	}
	r.env.note("%s", msg)
	return p, nil
}

// progressEvery is how often a long statement says it is still running.
const progressEvery = 15 * time.Second

// stillRunning notes "what, N s" every progressEvery from since on, until
// the returned function is called (which waits for the notes to stop).
func (e *Env) stillRunning(what string, since time.Time) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				e.note("    %s, %.0f s", what, now.Sub(since).Seconds())
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// serverIO is the server's block I/O so far, all devices together; ok is
// false when the server does not count it.
func (r *rebuilder) serverIO() (instance.IOCounters, bool) {
	c, isCounter := r.o.Server.(ioCounter)
	if !isCounter {
		return instance.IOCounters{}, false
	}
	byDevice, err := c.IOCounters()
	if err != nil {
		return instance.IOCounters{}, false
	}
	var sum instance.IOCounters
	for _, d := range byDevice {
		sum.ReadIOs += d.ReadIOs
		sum.WriteIOs += d.WriteIOs
		sum.ReadBytes += d.ReadBytes
		sum.WriteBytes += d.WriteBytes
	}
	return sum, true
}

// reopen opens the database again from the server's target: the
// connections of the one before went with the server.
func (r *rebuilder) reopen(ctx context.Context) error {
	db, err := dialect.Open(ctx, r.o.Server.Target())
	if err != nil {
		return fmt.Errorf("reconnect after the restart: %w", err)
	}
	if _, ok := db.(dialect.IndexRebuilder); !ok {
		db.Close()
		return &UnsupportedError{What: "rebuild indexes", Dialect: db.Name()}
	}
	r.close()
	r.db, r.owned = db, db
	return nil
}

func (r *rebuilder) close() {
	if r.owned != nil {
		r.owned.Close()
		r.owned = nil
	}
}

// sizeOf is the size of the named index, or of all when name is empty;
// -1 when a size is unknown.
func sizeOf(ixs []dialect.Index, name string) int64 {
	var total int64
	for _, ix := range ixs {
		if name != "" && ix.Name != name {
			continue
		}
		if ix.SizeBytes < 0 {
			return -1
		}
		total += ix.SizeBytes
	}
	return total
}

// formatSize prints a size in MiB, or "size unknown".
func formatSize(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// spreadOf summarises the finished phases of one cache state.
func spreadOf(phases []summary.RebuildPhase, cache string) *summary.RebuildSpread {
	var elapsed, cpu, wait []float64
	for _, p := range phases {
		if p.Cache != cache || p.Error != "" {
			continue
		}
		elapsed = append(elapsed, p.ElapsedSeconds)
		if p.ServerCPUSeconds != nil {
			cpu = append(cpu, *p.ServerCPUSeconds)
			wait = append(wait, *p.WaitSeconds)
		}
	}
	if len(elapsed) == 0 {
		return nil
	}
	s := &summary.RebuildSpread{Elapsed: profile.Summarize(elapsed)}
	if len(cpu) == len(elapsed) {
		c, w := profile.Summarize(cpu), profile.Summarize(wait)
		s.CPU, s.Wait = &c, &w
	}
	return s
}

// checkPhases says what the phases' own figures show about their
// measurement: I/O counters that counted nothing (a cgroup v1 I/O count
// needs a throttle on the device: they are dropped) and CPU taken by
// others, so that waited does not mean I/O alone: the foreign CPU (what
// neither the server nor oltplab used) above maxForeignPct of the host's
// cores, or, where it cannot be told, a host busyHostPct busy.
func checkPhases(phases []summary.RebuildPhase, maxForeignPct float64) []string {
	var notes []string
	uncounted := false
	var busy, n, foreign, nf float64
	for _, p := range phases {
		if p.Cache == summary.CacheCold && p.Error == "" && p.ServerIO != nil && p.ServerIO.ReadIOs == 0 && p.ServerIO.WriteIOs == 0 {
			uncounted = true
		}
		if p.Host.Seconds > 0 {
			busy += p.Host.CPU.BusyPct
			n++
			if u := p.Host.CPUUse; u != nil && u.ForeignPct != nil {
				foreign += *u.ForeignPct
				nf++
			}
		}
	}
	if uncounted {
		for i := range phases {
			phases[i].ServerIO = nil
		}
		notes = append(notes, "the server's I/O was not counted (its cgroup counts I/O only on a device with a throttle)")
	}
	switch {
	case nf > 0 && nf == n:
		if foreign/nf > maxForeignPct {
			notes = append(notes, fmt.Sprintf("foreign CPU (what neither the database server nor oltplab used) was %.0f%% of the host's cores during the rebuilds, "+
				"more than %g%%: their waited time includes waiting for a CPU, not only for I/O", foreign/nf, maxForeignPct))
		}
	case n > 0 && busy/n >= busyHostPct:
		notes = append(notes, fmt.Sprintf("the host's CPU was %.0f%% busy during the rebuilds: their waited time includes waiting for a CPU, not only for I/O", busy/n))
	}
	return notes
}

// storedRestart is a restart as a rebuild stores it.
func storedRestart(r instance.RestartReport) *summary.Restart {
	return &summary.Restart{At: r.At, Cold: r.Cold, CacheDropped: r.CacheDropped, Note: r.Note,
		StopSeconds: r.StopSeconds, StartSeconds: r.StartSeconds}
}
