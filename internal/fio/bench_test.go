package fio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/testenv"
)

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestMeasureRealFio runs two profiles for a second each on a tiny file:
// a mixed multi-job one and a read-only one.
func TestMeasureRealFio(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	dir := t.TempDir()
	profs, err := LookupProfiles("sql-8k,seq-read-128k")
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	res, err := Measure(context.Background(), Options{Dir: dir, Profiles: profs, Runtime: time.Second, SizeBytes: 16 << 20,
		Extra: []Option{{"norandommap", "1"}}}, Hooks{
		LayoutStart:  func(n int64) { events = append(events, "layout "+FormatBytes(n)) },
		ProfileStart: func(i, n int, p PlannedProfile) { events = append(events, "start "+p.Profile) },
		ProfileDone:  func(p ProfileResult) { events = append(events, "done "+p.Profile) },
	})
	if err != nil {
		t.Fatalf("Measure: %v", err)
	}
	if want := "layout 16 MiB,start sql-8k,done sql-8k,start seq-read-128k,done seq-read-128k"; strings.Join(events, ",") != want {
		t.Errorf("hooks: got %v, want %s", events, want)
	}
	if left := dirEntries(t, dir); len(left) != 0 {
		t.Errorf("files left in the directory: %v", left)
	}
	p := res.Plan
	if !strings.HasPrefix(p.FioVersion, "fio-") || p.FileSizeBytes != 16<<20 || p.SizeFrom != "--size" {
		t.Errorf("plan: got version %q, size %d from %q", p.FioVersion, p.FileSizeBytes, p.SizeFrom)
	}
	if !p.MemoryBacked && !p.DirectIO {
		t.Errorf("direct I/O: got false on %+v, want true", p.Device)
	}
	if res.Layout == nil || res.Interrupted || len(res.Profiles) != 2 {
		t.Fatalf("result: got layout %v, interrupted %v, %d profiles, want a layout and 2 profiles", res.Layout, res.Interrupted, len(res.Profiles))
	}
	wantDirs := [][]string{{"read", "write"}, {"read"}}
	for i, pr := range res.Profiles {
		if !slices.Contains(pr.Command, "--runtime=1") || !slices.Contains(pr.Command, "--norandommap=1") || pr.Options[len(pr.Options)-1].String() != "norandommap=1" {
			t.Errorf("%s: command %v lacks --runtime=1 or the extra option last", pr.Profile, pr.Command)
		}
		if pr.Jobs != 1 {
			t.Errorf("%s: got %d job entries, want 1 (group_reporting)", pr.Profile, pr.Jobs)
		}
		if !pr.Ended.After(pr.Started) {
			t.Errorf("%s: phase %v - %v", pr.Profile, pr.Started, pr.Ended)
		}
		var got []string
		for _, d := range pr.Directions {
			got = append(got, d.Direction)
			l := d.CompletionLatency
			if d.IOPS <= 0 || d.MBPerSec <= 0 || d.TotalBytes <= 0 || l.MeanMillis <= 0 {
				t.Errorf("%s %s: got IOPS %v, MB/s %v, bytes %d, mean %v ms, want all > 0", pr.Profile, d.Direction, d.IOPS, d.MBPerSec, d.TotalBytes, l.MeanMillis)
			}
			if !(0 < l.P50Millis && l.P50Millis <= l.P99Millis && l.P99Millis <= l.P999Millis) {
				t.Errorf("%s %s: percentiles out of order: %+v", pr.Profile, d.Direction, l)
			}
		}
		if strings.Join(got, ",") != strings.Join(wantDirs[i], ",") {
			t.Errorf("%s: directions %v, want %v", pr.Profile, got, wantDirs[i])
		}
	}
}

// fioRunningOn reports whether a process has file on its command line.
func fioRunningOn(file string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(file)) {
			return true
		}
	}
	return false
}

// TestRunInterrupted: cancelling the context while fio runs stops fio
// (no process left on the test file), returns what finished (nothing) marked
// interrupted, and Close removes the file.
func TestRunInterrupted(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to see fio's process")
	}
	dir := t.TempDir()
	profs, _ := LookupProfiles("oltp-4k-qd8") // 30 s unless stopped
	b, err := Prepare(context.Background(), Options{Dir: dir, Profiles: profs, SizeBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	file := b.Plan().File
	sawFio := make(chan bool, 1)
	res, err := b.Run(ctx, Hooks{ProfileStart: func(int, int, PlannedProfile) {
		go func() {
			for range 500 { // wait for the profile's fio to appear, then stop it
				if fioRunningOn(file) {
					sawFio <- true
					cancel()
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			sawFio <- false
			cancel()
		}()
	}})
	if !<-sawFio {
		t.Fatal("fio never appeared in /proc")
	}
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted || len(res.Profiles) != 0 || res.Layout == nil {
		t.Fatalf("got %+v, %v; want an interrupted result with the layout and no profile, and context.Canceled", res, err)
	}
	if fioRunningOn(file) {
		t.Error("fio still runs after Run returned")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if left := dirEntries(t, dir); len(left) != 0 {
		t.Errorf("files left in the directory: %v", left)
	}
}

func TestPrepareBadInput(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	profs, _ := LookupProfiles("oltp-4k-qd8")
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opts    Options
		wantErr string
		input   bool // an InputError
	}{
		{"missing directory", Options{Dir: filepath.Join(dir, "nope"), Profiles: profs}, "does not exist", true},
		{"a file", Options{Dir: file, Profiles: profs}, "is not a directory", true},
		{"too large for the free space", Options{Dir: dir, Profiles: profs, SizeBytes: 1 << 60}, "choose a smaller --size", true},
		{"fio missing", Options{Dir: dir, Profiles: profs, Path: []string{t.TempDir()}}, "fio is not installed (Debian package fio)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Prepare(context.Background(), c.opts)
			if err == nil {
				b.Close()
				t.Fatalf("got no error, want %q", c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error: got %v, want one containing %q", err, c.wantErr)
			}
			var ie *InputError
			if errors.As(err, &ie) != c.input {
				t.Errorf("error %v: InputError %v, want %v", err, !c.input, c.input)
			}
			if left := dirEntries(t, dir); len(left) != 1 {
				t.Errorf("files in the directory: got %v, want only plain-file", left)
			}
		})
	}
	if _, err := Prepare(context.Background(), Options{Dir: dir, Profiles: profs, Path: []string{t.TempDir()}}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("fio missing: got %v, want ErrNotInstalled", err)
	}
}

// TestPrepareMemoryBacked: a directory on tmpfs is measured with a note
// that says it is memory, and a 1 GiB default file.
func TestPrepareMemoryBacked(t *testing.T) {
	testenv.Require(t, testenv.Fio)
	if d, err := sysstat.DeviceOf("/dev/shm"); err != nil || d.FSType != "tmpfs" {
		t.Skip("no tmpfs at /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "oltplab-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	profs, _ := LookupProfiles("oltp-4k-qd8")
	b, err := Prepare(context.Background(), Options{Dir: dir, Profiles: profs})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := b.Plan()
	if !p.MemoryBacked || p.FileSizeBytes != 1<<30 || len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "tmpfs is memory-backed") {
		t.Errorf("plan: got memory-backed %v, size %s, notes %q", p.MemoryBacked, FormatBytes(p.FileSizeBytes), p.Notes)
	}
}
