package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return strings.Fields(s[i+2:]) // fields from state (3rd) on
}

// serverCPU is the CPU seconds of the postmaster, its reaped children and live children.
func serverCPU(pm int) float64 {
	f := procStat(pm)
	ticks := func(f []string, i ...int) float64 {
		var t float64
		for _, j := range i {
			v, _ := strconv.ParseFloat(f[j-3], 64)
			t += v
		}
		return t
	}
	total := ticks(f, 14, 15, 16, 17)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		g := procStat(pid)
		if len(g) > 15 && g[1] == strconv.Itoa(pm) {
			total += ticks(g, 14, 15)
		}
	}
	return total / 100
}

func TestScratchPhases(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	ctx := context.Background()
	tg, _ := dialect.ParseTarget(os.Getenv("SCRATCH"), "")
	dd, err := Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	d := dd.(*Database)
	conn, _ := d.connect(ctx)
	var be int
	conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&be)
	pm, _ := strconv.Atoi(procStat(be)[1])
	w, _ := strconv.Atoi(os.Getenv("SCRATCH_W"))
	workers, _ := strconv.Atoi(os.Getenv("SCRATCH_WORKERS"))
	s0, c0, t0 := serverCPU(pm), cpuSecondsT(), time.Now()
	if _, err := buildLoad(ctx, d, w, workers); err != nil {
		t.Fatal(err)
	}
	s1, c1, t1 := serverCPU(pm), cpuSecondsT(), time.Now()
	fmt.Printf("load      %6.2fs  server cpu %6.2fs  client cpu %6.2fs\n", t1.Sub(t0).Seconds(), s1-s0, c1-c0)
	if err := d.CreateIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	s2, c2, t2 := serverCPU(pm), cpuSecondsT(), time.Now()
	fmt.Printf("index     %6.2fs  server cpu %6.2fs  client cpu %6.2fs\n", t2.Sub(t1).Seconds(), s2-s1, c2-c1)
	if err := d.InstallProcedures(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	s3, c3, t3 := serverCPU(pm), cpuSecondsT(), time.Now()
	fmt.Printf("analyze   %6.2fs  server cpu %6.2fs  client cpu %6.2fs\n", t3.Sub(t2).Seconds(), s3-s2, c3-c2)
	fmt.Printf("total     %6.2fs  server cpu %6.2fs  client cpu %6.2fs\n", t3.Sub(t0).Seconds(), s3-s0, c3-c0)
}

func cpuSecondsT() float64 { u, s := cpuUserSys(nil); return u + s }

func BenchmarkScratchSelect1(b *testing.B) {
	ctx := context.Background()
	tg, _ := dialect.ParseTarget(os.Getenv("SCRATCH"), "")
	dd, err := Open(ctx, tg)
	if err != nil {
		b.Fatal(err)
	}
	d := dd.(*Database)
	c, _ := d.connect(ctx)
	var n int32
	q := "SELECT $1::int"
	if os.Getenv("SCRATCH_SLEEP") != "" {
		q = "SELECT $1::int FROM pg_sleep(" + os.Getenv("SCRATCH_SLEEP") + ")"
	}
	c.QueryRow(ctx, q, int32(1)).Scan(&n)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds(b)
	var ru0 syscall.Rusage
	syscall.Getrusage(0, &ru0)
	for range b.N {
		if err := c.QueryRow(ctx, q, int32(1)).Scan(&n); err != nil {
			b.Fatal(err)
		}
	}
	var ru1 syscall.Rusage
	syscall.Getrusage(0, &ru1)
	b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)*1e6, "cpu-us/op")
	b.ReportMetric(float64(ru1.Stime.Usec-ru0.Stime.Usec+1e6*(ru1.Stime.Sec-ru0.Stime.Sec))/float64(b.N), "sys-us/op")
	b.ReportMetric(float64(ru1.Nvcsw-ru0.Nvcsw)/float64(b.N), "vcsw/op")
	b.ReportMetric(float64(ru1.Nivcsw-ru0.Nivcsw)/float64(b.N), "ivcsw/op")
}
