package conformance

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// memoryVUs is how many virtual users BenchMemory runs.
const memoryVUs = 64

// BenchMemory measures what one virtual user holds in this process while
// it runs: a timed run of memoryVUs virtual users on one warehouse, for
// each execution style; during the measured window the Go heap and
// stacks in use (after a collection) are read every second, and the
// largest, less what was in use before the run, is reported per virtual
// user (bytes/vu): its session (the connection, its buffers, an embedded
// database's page cache), its histograms and terminal, its goroutine.
// driver.VUBytes, which bounds the virtual users a host's memory can
// take, comes from this figure.
//
//	go test -run '^$' -bench 'Conformance/memory' -benchtime 1x ./internal/dialect/...
func BenchMemory(b *testing.B, d Dialect) {
	db := openBench(b, d.Open(b), nil)
	if _, err := load.Build(b.Context(), db, load.Options{Warehouses: 1, Workers: 2, Seed: 1, ToolVersion: "bench"}, nil); err != nil {
		b.Fatalf("build: %v", err)
	}
	c, err := db.Connect(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	meta, err := tpcc.ReadMeta(b.Context(), c)
	c.Close()
	if err != nil {
		b.Fatal(err)
	}
	for _, style := range styles(db.Caps()) {
		b.Run(style.String(), func(b *testing.B) {
			for b.Loop() {
				benchMemory(b, db, meta, style)
			}
		})
	}
}

func benchMemory(b *testing.B, db dialect.Database, meta tpcc.Meta, style dialect.Style) {
	o := driver.Defaults()
	o.VUs, o.Style, o.Seed = memoryVUs, style, 1
	o.Rampup, o.Duration, o.Grace, o.LiveEvery = 2*time.Second, 5*time.Second, time.Second, time.Second
	before := heapInUse()
	var mu sync.Mutex
	var peak uint64
	res, err := driver.Run(b.Context(), db, meta, o, func(l driver.Live) {
		if l.Phase != driver.PhaseMeasure {
			return
		}
		m := heapInUse()
		mu.Lock()
		peak = max(peak, m)
		mu.Unlock()
	})
	if err != nil {
		b.Fatalf("run: %v", err)
	}
	if peak <= before {
		b.Fatalf("no reading during the window (before %d, peak %d)", before, peak)
	}
	b.ReportMetric(float64(peak-before)/memoryVUs, "bytes/vu")
	b.ReportMetric(res.TPM, "tpm")
}

// heapInUse is the memory the Go runtime holds for objects and stacks,
// after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
