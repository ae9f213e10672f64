package agent

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchAgentEnv makes the test binary, started again by
// BenchmarkStreamSample, the agent process (TestBenchAgentProcess).
const benchAgentEnv = "OLTPLAB_BENCH_AGENT_PROCESS"

// countingListener counts the bytes its connections write: what the agent
// sends on the wire, TLS records included (not TCP/IP headers).
type countingListener struct {
	net.Listener
	written *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, written: l.written}, nil
}

type countingConn struct {
	net.Conn
	written *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// TestBenchAgentProcess is not a test: BenchmarkStreamSample starts the
// test binary again with benchAgentEnv set, and then this serves an
// agent on loopback, in a process of its own, so that the agent's CPU and
// the client's are measured apart. It prints "addr ADDR", then, on each
// line read from stdin, "written N" (the bytes it has written to its
// connections so far); it stops when stdin closes. Without the variable
// it skips.
func TestBenchAgentProcess(t *testing.T) {
	if os.Getenv(benchAgentEnv) != "1" {
		t.Skip("the agent process of BenchmarkStreamSample")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&Server{}).Serve(ctx, countingListener{Listener: ln, written: &written}) }()
	fmt.Printf("addr %s\n", ln.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Printf("written %d\n", written.Load())
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// processCPU is the CPU time process pid's threads have used, in
// nanoseconds: the sum of the first field of their schedstat (time on a
// CPU), finer than /proc/PID/stat's 10 ms ticks. A thread that ended is
// no longer counted: Go's threads live as long as the process.
func processCPU(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("/proc/%d/task/%s/schedstat: empty", pid, t.Name())
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// selfCPU is the CPU time (user + system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStreamSample is an agent's overhead per streamed host sample:
// an agent, in a process of its own on loopback, streams its host's
// samples over TLS at the shortest interval (MinInterval) to a client in
// this process, as a runner's samplers read them; each iteration is one
// batch (one interval's samples of the host: CPU, memory, every disk and
// network device). Reported per batch: the agent's CPU (reading /proc and
// /sys, encoding, TLS), the client's (TLS, decoding), the bytes the agent
// wrote on the wire, and the values it held; the same per value. The
// connection and the hello are left out. The agent's CPU comes from its
// threads' schedstat, the client's from getrusage (the whole benchmark
// process, which does nothing else meanwhile). Linux only (/proc).
func BenchmarkStreamSample(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchAgentProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), benchAgentEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewScanner(stdout)
	line := func(prefix string) string {
		if !out.Scan() {
			b.Fatalf("agent process: no %q line: %v", prefix, out.Err())
		}
		v, ok := strings.CutPrefix(out.Text(), prefix+" ")
		if !ok {
			b.Fatalf("agent process: got %q, want %q", out.Text(), prefix+" ...")
		}
		return v
	}
	written := func() int64 {
		if _, err := fmt.Fprintln(stdin); err != nil {
			b.Fatal(err)
		}
		n, err := strconv.ParseInt(line("written"), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	addr := line("addr")

	ctx := context.Background()
	s, err := Open(ctx, Client{Addr: addr}, MinInterval, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// The first batch: the host sampler's first differences are in.
	if _, err := s.Next(); err != nil {
		b.Fatal(err)
	}
	agent0, err := processCPU(cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	bytes0, client0 := written(), selfCPU()
	values := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch, err := s.Next()
		if err != nil {
			b.Fatal(err)
		}
		values += len(batch.Samples)
	}
	b.StopTimer()
	client := selfCPU() - client0
	agent, err := processCPU(cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	agent -= agent0
	bytes := written() - bytes0
	if values == 0 {
		b.Fatal("the agent streamed no values")
	}
	n := float64(b.N)
	perValue := float64(values)
	b.ReportMetric(float64(values)/n, "values/batch")
	b.ReportMetric(float64(agent.Nanoseconds())/1e3/n, "agent-cpu-us/batch")
	b.ReportMetric(float64(client.Nanoseconds())/1e3/n, "client-cpu-us/batch")
	b.ReportMetric(float64(bytes)/n, "wire-bytes/batch")
	b.ReportMetric(float64(agent.Nanoseconds())/perValue, "agent-cpu-ns/value")
	b.ReportMetric(float64(client.Nanoseconds())/perValue, "client-cpu-ns/value")
	b.ReportMetric(float64(bytes)/perValue, "wire-bytes/value")
}
