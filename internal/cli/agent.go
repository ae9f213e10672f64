package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/latency"
)

const agentSynopsis = "agent [--listen ADDR] [--token-file FILE] [--state-dir DIR] [--allow-dir DIR]... [--lease 30s]"

// runAgent serves this host to an oltplab on another machine: its host
// metrics (run/monitor --agent HOST:PORT) and, for a plan's runner that
// presents the token, managed instances and the driver (a plan's hosts),
// until interrupted. Every connection is TLS with the agent's own
// certificate, whose fingerprint it prints.
func runAgent(ctx context.Context, a *app, args []string) error {
	var listen, tokenFile, stateDir string
	var allow []string
	var lease time.Duration
	fs := newFlagSet("agent")
	fs.StringVar(&listen, "listen", "127.0.0.1:7300",
		"`ADDR` to serve on, HOST:PORT; off loopback (:7300 is every interface) only with a token")
	fs.StringVar(&tokenFile, "token-file", "",
		"`FILE` whose first line is the token every request must present (at least 16 characters, the file readable by its owner only; "+
			"or set OLTPLAB_AGENT_TOKEN). Without a token the agent serves host metrics only, on loopback only")
	fs.StringVar(&stateDir, "state-dir", "",
		"`DIR` that keeps the agent's TLS certificate and key, made on first use (default: agent in oltplab's state directory, $XDG_STATE_HOME/oltplab or ~/.local/state/oltplab)")
	fs.StringSliceVar(&allow, "allow-dir", nil,
		"`DIR` below which the agent may create managed instances' data_dir and wal_dir and a backup step's backups and restored copies (to:, restore_dir:) (repeat for several); none: it starts no instance")
	fs.DurationVar(&lease, "lease", agent.DefaultLease,
		"how long an instance outlives the last word of the runner that started it: a runner renews it every third of this; one that died leaves nothing running beyond it")
	if err := a.parseFlags(fs, agentSynopsis, args); err != nil {
		return helpOK(err)
	}
	token := ""
	switch {
	case tokenFile != "":
		tok, err := agent.ReadToken(tokenFile)
		if err != nil {
			return usageErrorf("agent: --token-file: %v", err)
		}
		token = tok
	case a.env["OLTPLAB_AGENT_TOKEN"] != "":
		tok, err := agent.CheckToken(a.env["OLTPLAB_AGENT_TOKEN"], "OLTPLAB_AGENT_TOKEN")
		if err != nil {
			return usageErrorf("agent: %v", err)
		}
		token = tok
	}
	if lease < 3*time.Second || lease > time.Hour {
		return usageErrorf("agent: --lease %s: want 3s to 1h", lease)
	}
	if err := agent.CheckListen(listen, token != ""); err != nil {
		return usageErrorf("agent: %v", err)
	}
	for i, d := range allow {
		if !filepath.IsAbs(d) {
			return usageErrorf("agent: --allow-dir %q: want an absolute path", d)
		}
		allow[i] = filepath.Clean(d)
	}
	if stateDir == "" {
		d, err := instance.StateDir(func(k string) string { return a.env[k] })
		if err != nil {
			return usageErrorf("agent: no --state-dir: %v", err)
		}
		stateDir = filepath.Join(d, "agent")
	}
	id, err := agent.LoadIdentity(stateDir)
	if err != nil {
		return usageErrorf("agent: %v", err)
	}
	// A latency layer an agent killed earlier left mounted goes first: the
	// instances of that agent died with it (their parent-death signal).
	if mounts, err := latency.RemoveLeftovers(); err != nil {
		a.log.Warn("agent: latency layers left by an earlier process", "err", err)
	} else if len(mounts) > 0 {
		fmt.Fprintf(a.errw(), "oltplab agent: removed %d latency layer(s) an earlier oltplab left mounted\n", len(mounts))
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageErrorf("agent: cannot listen on %s: %v", listen, err)
	}
	what := "this host's metrics only (no token)"
	if token != "" {
		what = "this host's metrics, managed instances and the driver, to clients with the token"
	}
	fmt.Fprintf(a.errw(), "oltplab agent serving %s on %s over TLS (Ctrl-C stops)\n", what, ln.Addr())
	fmt.Fprintf(a.errw(), "certificate fingerprint %s (pin it: a plan's hosts.NAME.fingerprint, or --agent-fingerprint)\n", id.Fingerprint)
	if len(allow) > 0 {
		fmt.Fprintf(a.errw(), "instances may be created below: %v\n", allow)
	}
	srv := &agent.Server{Log: a.log, Identity: &id, Token: token, AllowDirs: allow, Lease: lease}
	err = srv.Serve(ctx, ln)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
