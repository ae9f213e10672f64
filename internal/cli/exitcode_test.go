package cli

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// TestExitCodes: typed errors map to their exit codes, through wrapping.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		// A missing privilege (CHECKPOINT, SET GLOBAL) is not a failed login.
		{"missing privilege", &dialect.Error{Class: dialect.ClassAuth, Op: "checkpoint",
			Err: fmt.Errorf("%w: needs pg_checkpoint: permission denied", dialect.ErrNotPermitted)}, exitPermission},
		{"failed login", &dialect.Error{Class: dialect.ClassAuth, Op: "connect", Err: errors.New("password authentication failed")}, exitAuth},
		{"bad target parameter", &dialect.Error{Class: dialect.ClassOther, Op: "connect", Err: fmt.Errorf("%w: unknown parameter", dialect.ErrBadTarget)}, exitUsage},
		{"foreign tables", fmt.Errorf("build: %w", &load.ForeignTablesError{Tables: []string{"customer"}}), exitSchema},
		{"damaged store", fmt.Errorf("open: %w", store.ErrDamaged), exitStore},
		{"busy store", fmt.Errorf("store: %w", store.ErrBusy), exitStore},
		{"saved result", &store.SavedError{Path: "/x", Err: store.ErrBusy}, exitStore},
		{"not a saved result", fmt.Errorf("import: %w", store.ErrNotSaved), exitUsage},
		{"interrupted", fmt.Errorf("run: %w", context.Canceled), exitInterrupted},
		// The connection error it wraps would be exit 3 on its own.
		{"server gone for good", &scenario.RunError{RunID: 1, Status: store.StatusPartial, Err: fmt.Errorf("run stopped: %w: %w: %w",
			driver.ErrServerGone, errors.New("virtual user 1"), &dialect.Error{Class: dialect.ClassConnection, Op: "connect", Err: errors.New("refused")})}, exitRunFailed},
		{"too many failures", errors.Join(&scenario.FailuresError{Total: 1}, &scenario.SuspectError{Total: 1}), exitFailures},
		{"suspect", &scenario.SuspectError{Total: 1}, exitSuspect},
		{"a plan's check step failed", fmt.Errorf("check on db: %w: TPC-C 3.3.2.1", experiment.ErrCheckFailed), exitCheckFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := exitCode(c.err); got != c.want {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}

// TestExitCodesDocumented: exitCodes is the one list of exit codes. Every
// exit code constant of exitcode.go is in it once, in order; `oltplab
// --help` prints it (the help golden holds that); README's table is it
// (go test ./internal/cli -run ExitCodes -update rewrites the table).
func TestExitCodesDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "exitcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[int]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !strings.HasPrefix(n.Name, "exit") || !ok {
					continue
				}
				v, err := strconv.Atoi(lit.Value)
				if err != nil {
					t.Fatalf("%s = %s: %v", n.Name, lit.Value, err)
				}
				if other, dup := consts[v]; dup {
					t.Errorf("%s and %s are both exit code %d", other, n.Name, v)
				}
				consts[v] = n.Name
			}
		}
	}
	var rows []string
	last := -1
	for _, c := range exitCodes {
		if _, ok := consts[c.code]; !ok {
			t.Errorf("exitCodes says what exit %d means, but exitcode.go has no constant for it", c.code)
		}
		delete(consts, c.code)
		if c.code <= last {
			t.Errorf("exitCodes: %d after %d, want each once, in order", c.code, last)
		}
		if c.help == "" || c.doc == "" || strings.Contains(c.doc, "|") || strings.Contains(c.doc, "\n") {
			t.Errorf("exit %d: want a help text and a one-line doc without '|', got %q and %q", c.code, c.help, c.doc)
		}
		last = c.code
		rows = append(rows, fmt.Sprintf("| %d | %s |", c.code, c.doc))
	}
	for v, name := range consts {
		t.Errorf("%s (exit %d) is not in exitCodes: say what it means there", name, v)
	}

	const head = "| code | meaning |\n|---|---|\n"
	readme := filepath.Join("..", "..", "README.md")
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "### Exit codes\n\n"+head)
	if start < 0 {
		t.Fatalf("%s has no exit code table (### Exit codes, then %q)", readme, head)
	}
	start += len("### Exit codes\n\n" + head)
	end := start + strings.Index(text[start:], "\n\n")
	want := strings.Join(rows, "\n")
	if *update && text[start:end] != want {
		if err := os.WriteFile(readme, []byte(text[:start]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[start:end]; got != want {
		t.Errorf("README's exit code table is not exitCodes (go test ./internal/cli -run ExitCodes -update rewrites it):\n got:\n%s\nwant:\n%s", got, want)
	}
}
