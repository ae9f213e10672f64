package driver_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// benchEnv reads a benchmark setting from the environment.
func benchEnv(b *testing.B, name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// BenchmarkTerminals measures what terminals cost the driver: it runs the
// tpc-c mode against a built database (OLTPLAB_BENCH_TARGET; its password
// from the URL or PGPASSWORD) with each terminal count of
// OLTPLAB_BENCH_TERMINALS (default 1000,10000), on a pool of
// OLTPLAB_BENCH_SESSIONS sessions (default: the driver's), after a
// ramp-up of one mean cycle and 10 s, for OLTPLAB_BENCH_WINDOW (default
// 2m), and reports the driver's CPU (share of a core, per terminal-second,
// per database transaction), how late terminals were handed a session
// (dispatch lag: the driver's own; start lag: with the wait for a
// session), the memory per terminal, the throughput and the New-Order rate
// against its maximum. More terminals than ten per warehouse make a
// non-conforming run: the figure measured here is the driver's cost.
//
//	OLTPLAB_BENCH_TARGET=postgres://oltplab@127.0.0.1:5432/tpcc100 \
//	  go test -run '^$' -bench Terminals -benchtime 1x -timeout 0 ./internal/driver
func BenchmarkTerminals(b *testing.B) {
	raw := os.Getenv("OLTPLAB_BENCH_TARGET")
	if raw == "" {
		b.Skip("OLTPLAB_BENCH_TARGET names no built database")
	}
	window, err := time.ParseDuration(benchEnv(b, "OLTPLAB_BENCH_WINDOW", "2m"))
	if err != nil {
		b.Fatalf("OLTPLAB_BENCH_WINDOW: %v", err)
	}
	sessions, err := strconv.Atoi(benchEnv(b, "OLTPLAB_BENCH_SESSIONS", "0"))
	if err != nil {
		b.Fatalf("OLTPLAB_BENCH_SESSIONS: %v", err)
	}
	var counts []int
	for _, f := range strings.Split(benchEnv(b, "OLTPLAB_BENCH_TERMINALS", "1000,10000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("OLTPLAB_BENCH_TERMINALS: %q is not a terminal count", f)
		}
		counts = append(counts, n)
	}
	ctx := context.Background()
	tg, err := dialect.ParseTarget(raw, "")
	if err != nil {
		b.Fatalf("OLTPLAB_BENCH_TARGET: %v", err)
	}
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		b.Fatalf("open %s: %v", tg, err)
	}
	defer db.Close()
	c, err := db.Connect(ctx)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	meta, err := tpcc.ReadMeta(ctx, c)
	c.Close()
	if err != nil {
		b.Fatalf("read the schema metadata: %v", err)
	}
	for _, n := range counts {
		b.Run(fmt.Sprintf("terminals=%d", n), func(b *testing.B) {
			for b.Loop() {
				o := driver.Defaults()
				o.Mode, o.VUs, o.Terminals, o.Sessions = driver.ModeTPCC, 0, n, sessions
				o.Rampup, o.Duration, o.Grace = tpcc.MeanCycle()+10*time.Second, window, 10*time.Second
				o.LiveEvery, o.Seed = time.Minute, 1
				if !meta.Procedures {
					o.Style = dialect.StyleClientSQL
				}
				res, err := driver.Run(ctx, db, meta, o, nil)
				if err != nil {
					b.Fatalf("run %d terminals: %v", n, err)
				}
				reportTerminals(b, res)
			}
		})
	}
}

func reportTerminals(b *testing.B, res *driver.Result) {
	p := res.Pacing
	b.ReportMetric(res.DriverCPUCores, "cores")
	b.ReportMetric(p.CPUMicrosPerUserSecond, "cpu-us/terminal-s")
	b.ReportMetric(res.DriverCPUMicrosPerTx, "cpu-us/tx")
	b.ReportMetric(float64(p.DispatchLagMicros.P99)/1000, "dispatch-lag-p99-ms")
	b.ReportMetric(float64(p.DispatchLagMicros.Max)/1000, "dispatch-lag-max-ms")
	b.ReportMetric(float64(p.StartLagMicros.P99)/1000, "start-lag-p99-ms")
	b.ReportMetric(float64(p.SessionWaitMicros.P99)/1000, "session-wait-p99-ms")
	b.ReportMetric(p.TerminalBytes, "bytes/terminal")
	b.ReportMetric(float64(res.DBTransactions)/res.Window.Seconds, "tx/s")
	b.ReportMetric(res.Spec.EfficiencyPct, "efficiency-%")
	var failed []string
	for _, c := range res.Spec.Checks {
		if !c.Pass {
			failed = append(failed, c.Name)
		}
	}
	b.Logf("%d terminals on %d warehouses, %d sessions: %.0f New-Orders/min of %.0f (%.1f%%), conforming %v (failed: %s); "+
		"new_order p90 %.1f ms; deferred Delivery p90 %.1f ms; window %.0f s",
		res.Options.Terminals, res.Warehouses, res.Options.Sessions, res.Spec.NewOrdersPerMinute, res.Spec.MaxNewOrdersPerMinute,
		res.Spec.EfficiencyPct, res.Spec.Conforming, strings.Join(failed, ", "),
		float64(res.Kinds[tpcc.NewOrderTx].LatencyMicros.P90)/1000, float64(res.Deferred.CompletionMicros.P90)/1000, res.Window.Seconds)
}
