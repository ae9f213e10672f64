// Command oltplab drives OLTP databases with a TPC-C style workload and
// reports what the infrastructure under them does to throughput and latency.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/oltplab/oltplab/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Environ(), cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
