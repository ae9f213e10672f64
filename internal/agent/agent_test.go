package agent

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/fio"
)

// TestStreamLoopback runs an agent on loopback and reads its stream: the
// host's description, the device under a directory, and per-interval CPU
// samples; closing the stream ends the agent's handler, and canceling the
// agent's context ends the agent.
func TestStreamLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&Server{}).Serve(ctx, ln) }()

	dir := t.TempDir()
	s, err := Open(context.Background(), Client{Addr: ln.Addr().String()}, 200*time.Millisecond, map[string]string{"data": dir})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if s.Hello.Host.LogicalCPUs == 0 {
		t.Errorf("hello without the host: %+v", s.Hello.Host)
	}
	if _, err := os.Stat("/sys/block"); err == nil && len(s.Hello.Roles) == 0 {
		t.Errorf("hello without the device under %s (warnings %q)", dir, s.Hello.Warnings)
	}
	cpu := 0
	for i := 0; i < 3; i++ {
		b, err := s.Next()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		for _, x := range b.Samples {
			if x.Metric == "cpu_busy_pct" {
				cpu++
			}
		}
	}
	if cpu < 2 {
		t.Errorf("got %d CPU samples in 3 batches, want one per interval after the first", cpu)
	}
	s.Close()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop")
	}
	if _, err := Open(context.Background(), Client{Addr: ln.Addr().String()}, time.Second, nil); err == nil {
		t.Errorf("open after the agent stopped: no error")
	}
	if _, err := Open(context.Background(), Client{Addr: "no-port"}, time.Second, nil); err == nil {
		t.Errorf("open of an address without a port: no error")
	}
}

// TestAgentFioOptions: the agent's fio takes the options that shape the
// I/O and refuses those that run commands, load code or write files.
func TestAgentFioOptions(t *testing.T) {
	for _, c := range []struct {
		opt string
		ok  bool
	}{
		{"rwmixread=50", true}, {"bs=8k", true}, {"ioengine=libaio", true}, {"direct=0", true},
		{"exec_prerun=touch /tmp/x", false}, {"write_iolog=/tmp/log", false}, {"write_bw_log=/tmp/bw", false},
		{"ioengine=external:/tmp/x.so", false}, {"filename=/etc/passwd", false}, {"directory=/", false},
	} {
		o, err := fio.ParseOption(c.opt)
		if err == nil {
			err = checkAgentFioOption(o)
		}
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want accepted %v", c.opt, err, c.ok)
		}
	}
}
