package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestReadersInterrupted: report, results export and check interrupted
// (Ctrl-C and SIGTERM both cancel Main's context, cmd/oltplab; a second
// signal changes nothing more) exit 130, leave a file they were to
// replace as it was, with no temporary sibling, and lose nothing stored.
func TestReadersInterrupted(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	target, _ := builtSQLite(t)
	if r := oltplab(t, env, "run", "--target", target, "--vus", "1", "--rampup", "0s", "--duration", "1s", "--label", "x"); r.code != 0 {
		t.Fatalf("run: exit %d", r.code)
	}
	before := oltplab(t, env, "results", "list", "--json")
	dir := t.TempDir()
	good := []byte("a good file from an earlier command\n")
	for _, args := range [][]string{
		{"report", "x", "-o", filepath.Join(dir, "report.html")},
		{"results", "export", "x", "--format", "json", "-o", filepath.Join(dir, "export.json")},
		{"results", "export", "x", "--format", "csv", "-o", filepath.Join(dir, "export.csv")},
		{"check", "--target", target},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			var file string
			if n := len(args); args[n-2] == "-o" {
				file = args[n-1]
				if err := os.WriteFile(file, good, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out, errb bytes.Buffer
			code := testMain(ctx, args, env, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code != exitInterrupted {
				t.Errorf("exit %d, want %d; stderr %q", code, exitInterrupted, errb.String())
			}
			if file != "" {
				if b, err := os.ReadFile(file); err != nil || !bytes.Equal(b, good) {
					t.Errorf("%s after the interrupt: %q (%v), want it as it was", filepath.Base(file), b, err)
				}
			}
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".oltplab-*")); len(tmp) > 0 {
				t.Errorf("temporary files left behind: %q", tmp)
			}
			if after := oltplab(t, env, "results", "list", "--json"); after.out != before.out {
				t.Errorf("stored results changed:\nbefore %s\nafter %s", before.out, after.out)
			}
		})
	}
}

// TestWriteFileAtomicInterrupted: an interrupt that arrives while the new
// file is being written leaves the old one in place, whole, and no
// temporary file; the exit code is 130.
func TestWriteFileAtomicInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	good := []byte("<html>the previous report</html>\n")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := writeFileAtomic(ctx, path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "<html>half a new rep")
		cancel() // Ctrl-C or SIGTERM in the middle of writing
		_, err := io.WriteString(w, "ort</html>\n")
		return err
	})
	if got := exitCode(err); got != exitInterrupted {
		t.Errorf("exit code %d (%v), want %d", got, err, exitInterrupted)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
		t.Errorf("file after the interrupt: %q, want the previous one", b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".oltplab-*")); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %q", tmp)
	}
}
