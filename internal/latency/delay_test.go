package latency

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/testenv"
)

// TestFsyncDelay: every fsync through a layer with a fixed fsync delay
// takes at least that delay, as the caller measures it and as the layer
// records it. A lower bound: a delay injected must be observed; how much
// more a busy host adds is not asserted.
func TestFsyncDelay(t *testing.T) {
	needRoot(t)
	const delay = 20 * time.Millisecond
	d := takeDir(t, "data")
	l := mount(t, Settings{Delays: [NumKinds]Delay{Fsync: {Shape: Fixed, Center: delay}}}, Dir{Role: "data", Dir: d})
	out := inside(t, l, -1, `cd `+d.Path()+`
python3 -c "
import os, time
fd = os.open('f', os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(10):
    os.write(fd, b'x' * 100)
    t = time.monotonic_ns(); os.fdatasync(fd); print(time.monotonic_ns() - t)
"`)
	lines := strings.Fields(out)
	if len(lines) != 10 {
		t.Fatalf("want 10 timings, got %q", out)
	}
	for _, s := range lines {
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("timing %q: %v", s, err)
		}
		if got := time.Duration(ns); got < delay {
			t.Errorf("an fdatasync took %s through a layer delaying each by %s", got, delay)
		}
	}
	s, err := l.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := s.Mounts["data"].Kinds[Fsync]
	if n := f.Seen.TotalCount(); n < 10 {
		t.Errorf("the layer recorded %d fsyncs, want at least 10", n)
	}
	if min := time.Duration(f.Seen.Min()) * time.Microsecond; min < delay-time.Millisecond {
		// HDR buckets round down by at most 0.1%.
		t.Errorf("the layer's shortest fsync: %s, below the delay %s", min, delay)
	}
	if want := time.Duration(f.Seen.TotalCount()) * delay; f.Delayed != want {
		t.Errorf("delays drawn: %s, want %s", f.Delayed, want)
	}
}

// TestFioReadDelay: fio's median read latency through a layer with a
// fixed read delay is the delay, within 20%, measured the way the
// storage step measures (fio with direct I/O, started inside the layer).
// The delay, 10 ms, is long beside what the device below, the layer and
// a busy host's scheduling add (on this 2-core host under a load of 13:
// 0.5 to 1 ms at the median with a 5 ms delay).
func TestFioReadDelay(t *testing.T) {
	needRoot(t)
	if _, err := fio.LookupProfiles("oltp-4k-qd8"); err != nil {
		t.Fatal(err)
	}
	const delay = 10 * time.Millisecond
	d := takeDir(t, "data")
	l := mount(t, Settings{Delays: [NumKinds]Delay{Read: {Shape: Fixed, Center: delay}}}, Dir{Role: "data", Dir: d})
	profiles, _ := fio.LookupProfiles("oltp-4k-qd8")
	extra := []fio.Option{{Key: "rw", Value: "randread"}}
	res, err := fio.Measure(context.Background(), fio.Options{Dir: d.Path(), Profiles: profiles, Runtime: 5 * time.Second,
		SizeBytes: 64 << 20, Extra: extra, Runner: l.Run}, fio.Hooks{})
	if err == fio.ErrNotInstalled {
		testenv.Unavailable(t, testenv.Fio, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !res.Plan.DirectIO {
		t.Fatalf("fio ran without direct I/O: %v", res.Plan.Notes)
	}
	var read *fio.Direction
	for i := range res.Profiles[0].Directions {
		if res.Profiles[0].Directions[i].Direction == "read" {
			read = &res.Profiles[0].Directions[i]
		}
	}
	if read == nil || read.TotalIOs < 1000 {
		t.Fatalf("too few reads measured: %+v", read)
	}
	p50 := read.CompletionLatency.P50Millis
	want := float64(delay) / float64(time.Millisecond)
	if p50 < want*0.8 || p50 > want*1.2 {
		t.Errorf("fio read p50 %.3f ms through a fixed %s read delay: not within 20%%", p50, delay)
	}
	t.Logf("fio: %d reads, p50 %.3f ms, p99 %.3f ms", read.TotalIOs, p50, read.CompletionLatency.P99Millis)
}
