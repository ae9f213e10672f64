package cli

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/oltplab/oltplab/internal/agent"
)

const agentSynopsis = "agent [--listen ADDR]"

// runAgent serves this host's metrics to an oltplab that drives a
// database here from another machine (run/monitor --agent HOST:PORT),
// until interrupted.
func runAgent(ctx context.Context, a *app, args []string) error {
	var listen string
	fs := newFlagSet("agent")
	fs.StringVar(&listen, "listen", "127.0.0.1:7300",
		"`ADDR` to serve on, HOST:PORT; :7300 serves on every interface (the agent sends host metrics only: CPU, memory, disks, network)")
	if err := a.parseFlags(fs, agentSynopsis, args); err != nil {
		return helpOK(err)
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return usageErrorf("agent: --listen %q: want HOST:PORT (e.g. :7300)", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageErrorf("agent: cannot listen on %s: %v", listen, err)
	}
	fmt.Fprintf(a.errw(), "oltplab agent serving this host's metrics on %s (Ctrl-C stops)\n", ln.Addr())
	err = agent.Server{Log: a.log}.Serve(ctx, ln)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
