package tpch

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkGenerate measures the generation rate of one core in MB/s of
// dbgen's flat-file text (the rows formatted as Row.AppendTBL writes
// them, nothing stored), per table at SF 1 on one chunk of 1/10 of the
// table, and for the whole population mix ("all": every table's share of
// SF 0.1, in dbgen's proportions). MB/s is wall-clock time, which other
// work on a shared machine stretches; MB/cpu-s divides by the CPU time the
// process spent (getrusage), the rate of one core whatever else runs.
//
//	go test -run '^$' -bench Generate -benchtime 3x ./internal/tpch
func BenchmarkGenerate(b *testing.B) {
	sf1, _ := ParseScale("1")
	g := NewGenerator(sf1)
	for _, t := range GeneratedTables {
		b.Run(t.String(), func(b *testing.B) {
			cs, err := sf1.Chunks(t, 10)
			if err != nil {
				b.Fatal(err)
			}
			benchChunks(b, g, cs[len(cs)/2:len(cs)/2+1])
		})
	}
	b.Run("all", func(b *testing.B) {
		sf, _ := ParseScale("0.1")
		g := NewGenerator(sf)
		var cs []Chunk
		for _, t := range GeneratedTables {
			c, _ := sf.Chunks(t, 1)
			cs = append(cs, c...)
		}
		benchChunks(b, g, cs)
	})
}

func benchChunks(b *testing.B, g *Generator, cs []Chunk) {
	buf := make([]byte, 0, 1<<20)
	var n int64
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		for _, c := range cs {
			err := g.Generate(c, func(r Row) error {
				buf = r.AppendTBL(buf)
				if len(buf) > 1<<20-1024 {
					n += int64(len(buf))
					buf = buf[:0]
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	n += int64(len(buf))
	b.StopTimer()
	b.SetBytes(n / int64(b.N))
	b.ReportMetric(float64(n)/1e6/(cpuTime(b)-cpu0).Seconds(), "MB/cpu-s")
}

// cpuTime is the process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
