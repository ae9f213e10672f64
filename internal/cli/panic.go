package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// recoverPanic turns a panic in a command into one line on stderr and
// exit code 1, with the stack trace written to a file for the bug report.
// It is the only recover in oltplab: library code never swallows a panic,
// so tests of those packages still fail on one, and the in-process CLI
// tests fail on the "internal error" line (cli_test.go).
//
// Panics in goroutines a command started cannot be recovered here; they
// end the process with Go's own trace.
func (a *app) recoverPanic(code *int) {
	v := recover()
	if v == nil {
		return
	}
	stack := debug.Stack()
	msg := oneLine(a.scrub(fmt.Sprint(v)))
	where := "could not write the trace"
	if path, err := a.writeTrace(v, stack); err == nil {
		where = "trace written to " + path
	} else {
		where += ": " + oneLine(err.Error())
	}
	fmt.Fprintf(a.stdio.Err, "oltplab: internal error (this is a bug): %s; %s\n", cut(msg, maxEcho), where)
	*code = exitFailure
}

// writeTrace writes the panic and its stack, secrets scrubbed, to a new
// file in the temporary directory ($TMPDIR).
func (a *app) writeTrace(v any, stack []byte) (string, error) {
	dir := a.env["TMPDIR"]
	if dir == "" {
		dir = os.TempDir()
	}
	name := fmt.Sprintf("oltplab-panic-%s-%d-*.txt", time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
	f, err := os.CreateTemp(dir, name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "oltplab %s: internal error (this is a bug)\n\npanic: %v\n\n%s", version(), v, stack)
	if _, err := f.WriteString(a.scrub(b.String())); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}
