package cli

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPanicBecomesOneLine: a panic in a command reaches the user as one
// line that says it is a bug and where the trace is, exit code 1; the
// trace file holds the stack and no password.
func TestPanicBecomesOneLine(t *testing.T) {
	tmp := t.TempDir()
	const pw = "hunter2hunter2"
	cmds := append(commands(), command{name: "explode", run: func(context.Context, *app, []string) error {
		var m map[string]int
		m["x"]++ // a nil map write: a runtime panic, as a real bug would be
		return errors.New("unreachable")
	}}, command{name: "explode-secret", run: func(_ context.Context, a *app, _ []string) error {
		if _, err := a.parseTarget(targetFlags{target: "postgres://u:" + pw + "@h/db"}); err != nil {
			return err
		}
		panic("failed with postgres://u:" + pw + "@h/db")
	}})
	for _, name := range []string{"explode", "explode-secret"} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := mainWith(context.Background(), []string{name}, []string{"TMPDIR=" + tmp}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, cmds)
			if code != exitFailure {
				t.Errorf("exit code: got %d, want %d", code, exitFailure)
			}
			line := errb.String()
			if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "oltplab: internal error (this is a bug): ") {
				t.Fatalf("stderr: got %q, want one \"internal error (this is a bug)\" line", line)
			}
			if strings.Contains(line, "goroutine") || strings.Contains(line, pw) {
				t.Errorf("stderr holds a trace or the password: %q", line)
			}
			_, path, ok := strings.Cut(strings.TrimSpace(line), "trace written to ")
			if !ok {
				t.Fatalf("stderr does not name the trace file: %q", line)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("trace file: %v", err)
			}
			if !bytes.Contains(b, []byte("goroutine")) || !bytes.Contains(b, []byte("panic_test.go")) {
				t.Errorf("trace file holds no stack:\n%s", b)
			}
			if bytes.Contains(b, []byte(pw)) {
				t.Errorf("trace file holds the password")
			}
		})
	}
}

// TestOnlyMainRecovers: the CLI's panic handler is the only recover in
// oltplab. Library code that swallowed panics would hide bugs from the
// tests of its own package.
func TestOnlyMainRecovers(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "recover" {
					found = append(found, path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "internal", "cli", "panic.go")
	if len(found) != 1 || found[0] != want {
		t.Errorf("recover() called in %v; want only in %s", found, want)
	}
}
