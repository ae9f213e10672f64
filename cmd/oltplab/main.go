// Command oltplab drives OLTP databases with a TPC-C style workload and
// reports what the infrastructure under them does to throughput and latency.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/oltplab/oltplab/internal/cli"
	"github.com/oltplab/oltplab/internal/latency"
)

func main() {
	// oltplab starts itself again to serve a managed instance's latency
	// layer (a process of its own: its CPU time is the layer's alone).
	if latency.IsDaemon() {
		os.Exit(latency.DaemonMain())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Environ(), cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
