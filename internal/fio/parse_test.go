package fio

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The fixtures are fio 3.33 output captured on a Debian 12 VM (ext4 on
// virtio) with --output-format=json+ (bins included) unless named
// plainjson, 2 s per run:
//
//	randread-4k-qd8             rw=randread bs=4k iodepth=8, group_reporting
//	write-128k-qd8              rw=write bs=128k iodepth=8, group_reporting
//	randrw-4k-qd32              rw=randrw rwmixread=70 bs=4k iodepth=32, group_reporting
//	randrw-8k-8jobs-grouped     rw=randrw rwmixread=75 bs=8k iodepth=4 numjobs=8, group_reporting
//	randrw-8k-2jobs-perjob      the same with numjobs=2 and no group_reporting: one entry per job
//	randread-64k-plainjson      rw=randread bs=64k iodepth=8, --output-format=json (no bins)

func TestParseFixtures(t *testing.T) {
	type lat struct{ mean, max, p50, p99, p999 float64 } // ns, as fio prints them
	type dir struct {
		name             string
		iops, bw         float64
		bytes, ios, rtMs int64
		lat              lat
		source           string
	}
	cases := []struct {
		file      string
		jobs      int
		dirs      []dir
		usr, sys_ float64
	}{
		{"randread-4k-qd8.json", 1, []dir{
			{"read", 33218.390805, 136062528, 272261120, 66470, 2001, lat{227487.633489, 40882537, 103936, 3129344, 23724032}, "fio"},
		}, 5.0, 37.95},
		{"write-128k-qd8.json", 1, []dir{
			{"write", 2416.291854, 316708205, 633733120, 4835, 2001, lat{3280656.591934, 56476873, 1400832, 31588352, 55836672}, "fio"},
		}, 2.4, 5.65},
		{"randrw-4k-qd32.json", 1, []dir{
			{"read", 29136.295557, 119342266, 239042560, 58360, 2003, lat{700685.882385, 35180439, 428032, 4358144, 28180480}, "fio"},
			{"write", 12445.831253, 50978124, 102109184, 24929, 2003, lat{873853.742749, 35359604, 552960, 5406720, 28180480}, "fio"},
		}, 6.493506, 51.898102},
		{"randrw-8k-8jobs-grouped.json", 1, []dir{
			{"read", 33320.455671, 272961172, 551108608, 67274, 2019, lat{666544.987633, 33649046, 464896, 1908736, 32112640}, "fio"},
			{"write", 11279.346211, 92400404, 186556416, 22773, 2019, lat{811291.403548, 33674453, 518144, 4554752, 32112640}, "fio"},
		}, 1.201685, 5.661546},
		// Two job entries: IOPS and bytes summed, mean weighted by I/O
		// count, percentiles from the merged histograms.
		{"randrw-8k-2jobs-perjob.json", 2, []dir{
			{"read", 27025.487256, 221392791, 443006976, 54078, 2001, lat{204326.106013, 33580242, 138240, 296960, 28180480}, "merged histograms"},
			{"write", 9065.467266, 74264307, 148602880, 18140, 2001, lat{225525.277563, 30584983, 158720, 489472, 27394048}, "merged histograms"},
		}, 4.6, 38.1},
		{"randread-64k-plainjson.json", 1, []dir{
			{"read", 9262.368816, 607018602, 1214644224, 18534, 2001, lat{848578.271933, 61382511, 757760, 3915776, 12386304}, "fio"},
		}, 3.1, 14.05},
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want)) }
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := Parse(f)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.FioVersion != "fio-3.33" || got.Jobs != c.jobs {
				t.Errorf("version, jobs: got %q, %d, want fio-3.33, %d", got.FioVersion, got.Jobs, c.jobs)
			}
			if !near(got.UserCPUPct, c.usr) || !near(got.SystemCPUPct, c.sys_) {
				t.Errorf("fio CPU: got %.6f%% user %.6f%% system, want %.6f, %.6f", got.UserCPUPct, got.SystemCPUPct, c.usr, c.sys_)
			}
			if len(got.Directions) != len(c.dirs) {
				t.Fatalf("directions: got %d (%+v), want %d", len(got.Directions), got.Directions, len(c.dirs))
			}
			for i, w := range c.dirs {
				g := got.Directions[i]
				if g.Direction != w.name {
					t.Errorf("direction %d: got %s, want %s", i, g.Direction, w.name)
				}
				checks := []struct {
					what      string
					got, want float64
				}{
					{"iops", g.IOPS, w.iops},
					{"bytes/s", g.BytesPerSec, w.bw},
					{"MB/s", g.MBPerSec, w.bw / 1e6},
					{"MiB/s", g.MiBPerSec, w.bw / 1048576},
					{"total bytes", float64(g.TotalBytes), float64(w.bytes)},
					{"total ios", float64(g.TotalIOs), float64(w.ios)},
					{"runtime ms", float64(g.RuntimeMillis), float64(w.rtMs)},
					{"clat mean ms", g.CompletionLatency.MeanMillis, w.lat.mean / 1e6},
					{"clat max ms", g.CompletionLatency.MaxMillis, w.lat.max / 1e6},
					{"clat p50 ms", g.CompletionLatency.P50Millis, w.lat.p50 / 1e6},
					{"clat p99 ms", g.CompletionLatency.P99Millis, w.lat.p99 / 1e6},
					{"clat p99.9 ms", g.CompletionLatency.P999Millis, w.lat.p999 / 1e6},
				}
				for _, ck := range checks {
					if !near(ck.got, ck.want) {
						t.Errorf("%s %s: got %v, want %v", w.name, ck.what, ck.got, ck.want)
					}
				}
				if g.CompletionLatency.PercentileSource != w.source {
					t.Errorf("%s percentile source: got %q, want %q", w.name, g.CompletionLatency.PercentileSource, w.source)
				}
			}
		})
	}
}

// TestMergedPercentilesMatchFio: read off fio's own histogram of a job,
// mergedPercentiles gives exactly the percentiles fio printed for it.
func TestMergedPercentilesMatchFio(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var out fioOutput
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		for _, j := range out.Jobs {
			for name, d := range map[string]fioDir{"read": j.Read, "write": j.Write} {
				if len(d.Clat.Bins) == 0 {
					continue
				}
				t.Run(filepath.Base(file)+"/"+name, func(t *testing.T) {
					keys := make([]string, 0, len(d.Clat.Percentile))
					for k := range d.Clat.Percentile {
						keys = append(keys, k)
					}
					ps := make([]float64, len(keys))
					for i, k := range keys {
						ps[i], _ = strconv.ParseFloat(k, 64)
					}
					sort.Slice(keys, func(a, b int) bool {
						x, _ := strconv.ParseFloat(keys[a], 64)
						y, _ := strconv.ParseFloat(keys[b], 64)
						return x < y
					})
					sort.Float64s(ps)
					got, err := mergedPercentiles([]map[string]int64{d.Clat.Bins}, ps)
					if err != nil {
						t.Fatal(err)
					}
					for i, k := range keys {
						if got[i] != d.Clat.Percentile[k] {
							t.Errorf("p%s: got %v, fio printed %v", k, got[i], d.Clat.Percentile[k])
						}
					}
				})
			}
		}
	}
}

func TestMergedPercentiles(t *testing.T) {
	cases := []struct {
		name  string
		hists []map[string]int64
		want  []float64 // p50, p99, p99.9
	}{
		{"one bucket", []map[string]int64{{"1000": 10}}, []float64{1000, 1000, 1000}},
		{"two jobs add up", []map[string]int64{{"100": 50}, {"100": 49, "900": 1}}, []float64{100, 100, 900}},
		{"p50 at the boundary", []map[string]int64{{"10": 5, "20": 5}}, []float64{10, 20, 20}},
		// 99.9/100*1000 is a hair above 999 in floating point, in fio too:
		// the 999th I/O does not reach p99.9, the 1000th does.
		{"tail of 2 in 1000", []map[string]int64{{"1": 998}, {"5": 1, "9": 1}}, []float64{1, 1, 9}},
		{"tail of 3 in 2000", []map[string]int64{{"1": 1997}, {"5": 2, "9": 1}}, []float64{1, 1, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mergedPercentiles(c.hists, []float64{50, 99, 99.9})
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Errorf("percentiles: got %v, want %v", got, c.want)
					break
				}
			}
		})
	}
	if _, err := mergedPercentiles([]map[string]int64{{}}, []float64{50}); err == nil {
		t.Error("empty histograms: got no error")
	}
}

func TestParseBadOutput(t *testing.T) {
	good, err := os.ReadFile("testdata/randread-4k-qd8.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in string
		wantErr  string // "" : parses
	}{
		{"notes before the document", "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + string(good), ""},
		{"empty", "", "no JSON document"},
		{"only an error line", "fio: file:ioengines.c:134, func=dlopen, error=nosuchengine\n", "no JSON document"},
		{"truncated", string(good[:len(good)/2]), "parse fio output"},
		{"no jobs", `{"fio version": "fio-3.33", "jobs": []}`, "no jobs"},
		{"job error", `{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "error": 22}]}`, "job x failed with error 22"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(c.in))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case c.wantErr == "" && len(rep.Directions) != 1:
				t.Errorf("directions: got %d, want 1", len(rep.Directions))
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error: got %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// TestParsePercentilesUnavailable: several job entries without histograms
// (plain json, no group_reporting) cannot give percentiles: they are 0 and
// say so, while the sums still hold.
func TestParsePercentilesUnavailable(t *testing.T) {
	job := `{"jobname": "j", "error": 0, "read": {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1, "runtime": 1000, "total_ios": 1,
		"clat_ns": {"mean": 2000000, "max": 2000000, "N": 1, "percentile": {"50.000000": 2000000, "99.000000": 2000000, "99.900000": 2000000}}},
		"write": {"total_ios": 0}}`
	rep, err := Parse(strings.NewReader(`{"fio version": "fio-3.33", "jobs": [` + job + `,` + job + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Directions[0]
	if d.IOPS != 2 || d.TotalIOs != 2 || d.CompletionLatency.MeanMillis != 2 {
		t.Errorf("sums: got iops %v, ios %v, mean %v ms, want 2, 2, 2", d.IOPS, d.TotalIOs, d.CompletionLatency.MeanMillis)
	}
	if d.CompletionLatency.PercentileSource != "" || d.CompletionLatency.P99Millis != 0 {
		t.Errorf("percentiles: got %+v, want none", d.CompletionLatency)
	}
}
