package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// lookPath finds an executable name in dirs, or in $PATH when dirs is nil.
func lookPath(name string, dirs []string) (string, error) {
	if dirs == nil {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", ErrNotInstalled
		}
		return p, nil
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// fioVersion runs `fio --version` ("fio-3.33").
func fioVersion(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s --version: %w", bin, ctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, "fio") {
		return "", fmt.Errorf("%s --version printed %q, not a fio version", bin, v)
	}
	return v, nil
}

// fioFilename escapes a path for fio's filename option, where ':'
// separates several files.
func fioFilename(path string) string { return strings.ReplaceAll(path, ":", `\:`) }

// layoutArgs make fio write the whole test file once (create_only runs
// only the setup phase; with the default rw=read fio fills the file with
// data rather than leaving unwritten extents that reads would not fetch
// from the device).
func layoutArgs(file string, size int64) []string {
	return []string{"--name=layout", "--filename=" + fioFilename(file), "--size=" + strconv.FormatInt(size, 10),
		"--create_only=1", "--thread=1", "--output-format=json"}
}

// profileArgs is fio's command line for one profile on the test file.
func profileArgs(name, file string, size int64, opts []Option) []string {
	args := []string{"--name=" + name, "--filename=" + fioFilename(file), "--size=" + strconv.FormatInt(size, 10),
		"--output-format=json+"}
	for _, o := range opts {
		args = append(args, "--"+o.Key+"="+o.Value)
	}
	return args
}

// runFio runs fio to completion and returns its standard output. A
// cancelled context sends SIGINT to fio's process group and SIGKILL if it
// has not exited 10 s later; the kernel kills fio if this thread dies
// first (Pdeathsig on Linux), which is why the thread stays locked while
// fio runs.
//
// run, when not nil, runs the command instead of cmd.Run (Options.Runner).
func runFio(ctx context.Context, run func(*exec.Cmd) error, bin string, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = 10 * time.Second

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	if run != nil {
		err = run(cmd)
	} else {
		err = cmd.Run()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg := lastLine(stderr.Bytes())
			if msg == "" {
				msg = lastLine(stdout.Bytes())
			}
			return nil, fmt.Errorf("fio exited with status %d: %s", ee.ExitCode(), msg)
		}
		return nil, fmt.Errorf("run fio: %w", err)
	}
	return stdout.Bytes(), nil
}
