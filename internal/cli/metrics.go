package cli

import (
	"fmt"
	"net"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/metrics"
	"github.com/oltplab/oltplab/internal/scenario"
)

// registerMetrics adds --metrics-listen to a command that drives a
// workload.
func registerMetrics(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "metrics-listen", "", "serve live metrics (transactions by type and outcome, latency histograms, NOPM/TPM, phase, "+
		"virtual users, driver CPU) in the Prometheus exposition format at http://`ADDR`/metrics while the command runs, "+
		"e.g. 127.0.0.1:9464 (loopback: this machine only); nothing is served without it")
}

// liveMetrics is a running metrics endpoint.
type liveMetrics struct {
	m   *metrics.Metrics
	srv *metrics.Server
}

// startMetrics starts the endpoint of --metrics-listen ADDR (nil when addr
// is empty) and says where it is on stderr.
func (a *app) startMetrics(cmd, addr string) (*liveMetrics, error) {
	if addr == "" {
		return nil, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, usageErrorf("%s: --metrics-listen %q: want HOST:PORT (e.g. 127.0.0.1:9464)", cmd, addr)
	}
	m := metrics.New()
	srv, err := metrics.Listen(addr, m, a.log)
	if err != nil {
		return nil, usageErrorf("%s: --metrics-listen: cannot listen on %s: %v", cmd, addr, err)
	}
	fmt.Fprintf(a.errw(), "live metrics at %s\n", srv.URL())
	return &liveMetrics{m: m, srv: srv}, nil
}

// close stops the endpoint.
func (l *liveMetrics) close() {
	if l != nil {
		_ = l.srv.Close()
	}
}

// observe makes obs feed the metrics too: every transaction through the
// recorder, the driver's rates through Live.
func (l *liveMetrics) observe(obs *scenario.Observer) {
	if l == nil {
		return
	}
	obs.Recorder = l.m
	prev := obs.Live
	obs.Live = func(v driver.Live) {
		l.m.Live(v)
		if prev != nil {
			prev(v)
		}
	}
}
