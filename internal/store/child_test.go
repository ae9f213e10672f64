package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/testenv"
)

// Some store tests need other processes: another oltplab opening or
// writing the same file, or a tool holding it locked. The test binary
// re-executes itself as such a process when OLTPLAB_STORE_CHILD says what
// to do ("lock PATH", "open PATH", "write PATH N"); "open" and "write"
// wait for a go-ahead (startTogether).
func TestMain(m *testing.M) {
	if spec := os.Getenv("OLTPLAB_STORE_CHILD"); spec != "" {
		if err := child(strings.Fields(spec)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(args []string) error {
	ctx := context.Background()
	switch args[0] {
	case "lock":
		// Hold the file with an exclusive transaction, as another tool
		// would, until stdin closes.
		db, err := sql.Open("sqlite", args[1]+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
			return err
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
		fmt.Println("released")
		return nil
	case "open":
		awaitStart()
		s, err := Open(ctx, args[1])
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.ListRuns(ctx, RunFilter{})
		return err
	case "unwritable":
		// Open a store where this user may not write, and say whether
		// it was refused as ErrUnwritable (the parent runs this as an
		// unprivileged user).
		s, err := Open(ctx, args[1])
		switch {
		case err == nil:
			s.Close()
			fmt.Println("opened")
		case errors.Is(err, ErrUnwritable):
			fmt.Println("unwritable")
		default:
			fmt.Println("other:", err)
		}
		return nil
	case "write":
		// Create and complete runs, each with a histogram and a batch of
		// samples, saying "done ID" after each.
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		awaitStart()
		s, err := Open(ctx, args[1])
		if err != nil {
			return err
		}
		defer s.Close()
		for range n {
			id, err := s.CreateRun(ctx, Run{Kind: KindRun, Label: fmt.Sprintf("pid%d", os.Getpid())})
			if err != nil {
				return err
			}
			fmt.Println("started", id)
			if err := s.CompleteRun(ctx, id, testOutcome(samplesPerRun)); err != nil {
				return err
			}
			fmt.Println("done", id)
		}
		return nil
	}
	return fmt.Errorf("unknown child action %q", args[0])
}

// awaitStart says "ready" and waits for a line on stdin, so that the
// parent starts several children at the same moment.
func awaitStart() {
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// startTogether starts children (which say "ready" first) at once.
func startTogether(t *testing.T, cs ...*childProc) {
	t.Helper()
	for _, c := range cs {
		c.expect(t, "ready")
	}
	for _, c := range cs {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// samplesPerRun is how many samples each run of a "write" child stores.
const samplesPerRun = 2000

// testOutcome is a finished run with one histogram and n samples.
func testOutcome(n int) Outcome {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for v := range int64(100) {
		_ = h.RecordValue(1000 + v)
	}
	samples := make([]Sample, n)
	for i := range samples {
		samples[i] = Sample{TMillis: int64(i) * 1000, Source: SourceHost, Metric: "cpu_busy_pct", Value: float64(i % 100)}
	}
	return Outcome{Status: StatusOK, Summary: []byte(`{"nopm":1}`), Histograms: map[string]*hdrhistogram.Histogram{"new_order": h}, Samples: samples}
}

// openAsNobody opens a store at path as an unprivileged user (nobody,
// 65534): the test binary, copied into dir (which nobody can reach), runs
// as that user. It returns ErrUnwritable when the child saw Open refuse
// the store so, and another error otherwise.
func openAsNobody(t *testing.T, dir, path string) error {
	t.Helper()
	testenv.Require(t, testenv.Subprocess)
	bin := filepath.Join(dir, "store.test")
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "OLTPLAB_STORE_CHILD=unwritable "+path)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the store opened as nobody: %v\n%s", err, out)
	}
	switch got := strings.TrimSpace(string(out)); got {
	case "unwritable":
		return ErrUnwritable
	default:
		return fmt.Errorf("as nobody: %s", got)
	}
}

// childProc is a running child process of the test binary.
type childProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan error
}

// startChild runs the test binary as a child doing spec.
func startChild(t *testing.T, spec string) *childProc {
	testenv.Require(t, testenv.Subprocess)
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OLTPLAB_STORE_CHILD="+spec)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childProc{cmd: cmd, stdin: stdin, lines: make(chan string, 1000), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		for range c.lines {
		}
	})
	return c
}

// expect waits for the child's next line and checks it starts with want.
func (c *childProc) expect(t *testing.T, want string) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("child ended before saying %q: %v", want, <-c.done)
		}
		if !strings.HasPrefix(line, want) {
			t.Fatalf("child said %q, want %q", line, want)
		}
		return line
	case <-time.After(2 * time.Minute):
		t.Fatalf("child did not say %q", want)
	}
	return ""
}

// wait waits for the child to end and returns its error.
func (c *childProc) wait() error {
	for range c.lines {
	}
	return <-c.done
}
