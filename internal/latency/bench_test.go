package latency

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/fio"
)

// BenchmarkLayerOverhead measures what the layer costs at zero delay
// (scripts/bench.sh runs it): fio's 4 KiB random reads and writes with
// direct I/O, one at a time (psync) and 8 in flight (libaio), on a bare
// directory of the disk and on the same directory through a layer with
// zero delays, one after the other; it reports the latency fio saw
// (p50, p99, µs), the IOPS, and the layer process's CPU time per I/O.
// OLTPLAB_BENCH_FIO_RUNTIME sets each measurement's length (default 10s).
func BenchmarkLayerOverhead(b *testing.B) {
	needRoot(b)
	if _, err := exec.LookPath("fio"); err != nil {
		b.Skip(err)
	}
	runtime := 10 * time.Second
	if v := os.Getenv("OLTPLAB_BENCH_FIO_RUNTIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		runtime = d
	}
	// On the disk (not a tmpfs), as a managed instance's directory is.
	base, err := os.MkdirTemp("/var/tmp", "oltplab-latency-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(base)
	profiles, err := fio.LookupProfiles("oltp-4k-qd8")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, c := range []struct {
			name  string
			extra []fio.Option
		}{
			{"randread-qd1", []fio.Option{{Key: "rw", Value: "randread"}, {Key: "ioengine", Value: "psync"}, {Key: "iodepth", Value: "1"}}},
			{"randwrite-qd1", []fio.Option{{Key: "rw", Value: "randwrite"}, {Key: "ioengine", Value: "psync"}, {Key: "iodepth", Value: "1"}}},
			{"randread-qd8", []fio.Option{{Key: "rw", Value: "randread"}}},
			{"randwrite-qd8", []fio.Option{{Key: "rw", Value: "randwrite"}}},
		} {
			for _, layered := range []bool{false, true} {
				name := c.name + "/bare"
				if layered {
					name = c.name + "/layer"
				}
				d := takeDirIn(b, base, c.name+"-"+filepath.Base(name))
				o := fio.Options{Dir: d.Path(), Profiles: profiles, Runtime: runtime, SizeBytes: 256 << 20, Extra: c.extra}
				var l *Layer
				if layered {
					l, err = Mount(context.Background(), []Dir{{Role: "data", Dir: d}}, Options{Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					o.Runner = l.Run
				}
				var before Snapshot
				res, err := fio.Measure(context.Background(), o, fio.Hooks{ProfileStart: func(int, int, fio.PlannedProfile) {
					if l != nil {
						before, _ = l.Snapshot(context.Background())
					}
				}})
				if err != nil {
					b.Fatal(err)
				}
				pr := res.Profiles[0]
				dir := pr.Directions[0]
				b.ReportMetric(dir.CompletionLatency.P50Millis*1000, name+"-p50-us")
				b.ReportMetric(dir.CompletionLatency.P99Millis*1000, name+"-p99-us")
				b.ReportMetric(dir.IOPS, name+"-iops")
				// fio's own CPU per I/O: what issuing the I/O costs the
				// caller, bare or through the layer.
				if dir.TotalIOs > 0 {
					cpu := (pr.UserCPUPct + pr.SystemCPUPct) / 100 * float64(dir.RuntimeMillis) / 1000
					b.ReportMetric(cpu*1e6/float64(dir.TotalIOs), name+"-fio-cpu-us/io")
				}
				if l != nil {
					after, err := l.Snapshot(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					w, err := after.Since(before)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(w.Summary().CPUMicrosPerOp, name+"-cpu-us/io")
					if err := l.Close(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				d.Close()
			}
		}
	}
}
