package fio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Report is one fio run's output, summed over its jobs.
type Report struct {
	// FioVersion is what fio wrote in its output, e.g. "fio-3.33".
	FioVersion string `json:"fio_version"`
	// Jobs is the number of job entries fio reported: 1 with
	// group_reporting, numjobs without.
	Jobs int `json:"jobs"`
	// Directions are the directions that did I/O, read before write.
	Directions []Direction `json:"directions"`
	// UserCPUPct and SystemCPUPct are fio's own CPU use as it reports it
	// (percent of one CPU over the job's runtime, summed over jobs).
	UserCPUPct   float64 `json:"fio_user_cpu_pct"`
	SystemCPUPct float64 `json:"fio_system_cpu_pct"`
}

// Direction is the I/O of one direction (read or write) of a fio run.
type Direction struct {
	Direction string  `json:"direction"` // "read" or "write"
	IOPS      float64 `json:"iops"`
	// BytesPerSec is fio's bw_bytes; MBPerSec is it in MB/s (10^6 bytes
	// per second), MiBPerSec in MiB/s (2^20 bytes per second, the unit of
	// diskspd and of fio's own text output).
	BytesPerSec   float64 `json:"bytes_per_s"`
	MBPerSec      float64 `json:"mb_per_s"`
	MiBPerSec     float64 `json:"mib_per_s"`
	TotalBytes    int64   `json:"total_bytes"`
	TotalIOs      int64   `json:"total_ios"`
	RuntimeMillis int64   `json:"runtime_ms"`
	// CompletionLatency is fio's clat: from submission to completion of
	// each I/O, the latency the database sees from the device.
	CompletionLatency Latency `json:"completion_latency"`
}

// Latency summarises fio's completion latencies, in milliseconds.
type Latency struct {
	MeanMillis float64 `json:"mean_ms"`
	MaxMillis  float64 `json:"max_ms"`
	P50Millis  float64 `json:"p50_ms"`
	P99Millis  float64 `json:"p99_ms"`
	P999Millis float64 `json:"p99_9_ms"`
	// The percentiles are values of fio's latency histogram buckets
	// (1/64 of a power of two wide, valued at their middle: fio's
	// plat_idx_to_val), so a percentile may exceed MaxMillis by up to half
	// a bucket.
	//
	// PercentileSource says where the percentiles come from: "fio" (its
	// own, one job entry), "merged histograms" (per-job histograms of
	// json+ output added up, the way fio computes its own), or "" when
	// they could not be had (several jobs without histograms, or a
	// percentile_list without 50, 99 and 99.9): then they are 0.
	PercentileSource string `json:"percentile_source"`
}

// fio's JSON output (--output-format=json or json+), the parts we read.
type fioOutput struct {
	Version string   `json:"fio version"`
	Jobs    []fioJob `json:"jobs"`
}

type fioJob struct {
	Name   string  `json:"jobname"`
	Error  int     `json:"error"`
	UsrCPU float64 `json:"usr_cpu"`
	SysCPU float64 `json:"sys_cpu"`
	Read   fioDir  `json:"read"`
	Write  fioDir  `json:"write"`
}

type fioDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BwBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"` // ms
	TotalIOs int64   `json:"total_ios"`
	Clat     fioLat  `json:"clat_ns"`
}

type fioLat struct {
	Max        float64            `json:"max"`
	Mean       float64            `json:"mean"`
	N          int64              `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	Bins       map[string]int64   `json:"bins"` // json+ only: latency in ns -> count
}

// Parse reads fio's JSON output (json or json+) and sums its jobs: with
// group_reporting fio reports one entry per profile; without it, one per
// job, and Parse adds them up (IOPS and bytes summed, means weighted by
// I/O count, percentiles from the merged json+ histograms). Lines fio
// prints before the JSON document (notes, warnings) are skipped. A job
// that reports an error is an error.
func Parse(r io.Reader) (Report, error) {
	br := bufio.NewReader(r)
	// fio may print notes before the document; it starts at a line "{".
	for {
		b, err := br.Peek(1)
		if err != nil {
			return Report{}, fmt.Errorf("parse fio output: no JSON document: %w", err)
		}
		if b[0] == '{' {
			break
		}
		if _, err := br.ReadBytes('\n'); err != nil {
			return Report{}, fmt.Errorf("parse fio output: no JSON document: %w", err)
		}
	}
	var out fioOutput
	if err := json.NewDecoder(br).Decode(&out); err != nil {
		return Report{}, fmt.Errorf("parse fio output: %w", err)
	}
	if len(out.Jobs) == 0 {
		return Report{}, errors.New("parse fio output: no jobs")
	}
	rep := Report{FioVersion: out.Version, Jobs: len(out.Jobs)}
	for _, j := range out.Jobs {
		if j.Error != 0 {
			return Report{}, fmt.Errorf("parse fio output: job %s failed with error %d (%s)", j.Name, j.Error, errnoText(j.Error))
		}
		rep.UserCPUPct += j.UsrCPU
		rep.SystemCPUPct += j.SysCPU
	}
	for _, dir := range []string{"read", "write"} {
		dirs := make([]fioDir, len(out.Jobs))
		for i, j := range out.Jobs {
			dirs[i] = j.Read
			if dir == "write" {
				dirs[i] = j.Write
			}
		}
		if d, ok := sumDirection(dir, dirs); ok {
			rep.Directions = append(rep.Directions, d)
		}
	}
	return rep, nil
}

// sumDirection adds up one direction over the jobs; ok is false when no
// job did I/O in it.
func sumDirection(name string, dirs []fioDir) (Direction, bool) {
	d := Direction{Direction: name}
	var weighted float64
	var n int64
	for _, x := range dirs {
		d.IOPS += x.IOPS
		d.BytesPerSec += x.BwBytes
		d.TotalBytes += x.IOBytes
		d.TotalIOs += x.TotalIOs
		d.RuntimeMillis = max(d.RuntimeMillis, x.Runtime)
		weighted += x.Clat.Mean * float64(x.Clat.N)
		n += x.Clat.N
		d.CompletionLatency.MaxMillis = max(d.CompletionLatency.MaxMillis, x.Clat.Max/1e6)
	}
	if d.TotalIOs == 0 {
		return Direction{}, false
	}
	d.MBPerSec = d.BytesPerSec / 1e6
	d.MiBPerSec = d.BytesPerSec / (1 << 20)
	if n > 0 {
		d.CompletionLatency.MeanMillis = weighted / float64(n) / 1e6
	}
	want := []float64{50, 99, 99.9}
	var ns []float64
	switch {
	case len(dirs) == 1:
		if v, ok := pickPercentiles(dirs[0].Clat.Percentile, want); ok {
			ns, d.CompletionLatency.PercentileSource = v, "fio"
		}
	default:
		hists := make([]map[string]int64, 0, len(dirs))
		for _, x := range dirs {
			if x.Clat.N > 0 && len(x.Clat.Bins) == 0 {
				hists = nil
				break
			}
			hists = append(hists, x.Clat.Bins)
		}
		if hists != nil {
			if v, err := mergedPercentiles(hists, want); err == nil {
				ns, d.CompletionLatency.PercentileSource = v, "merged histograms"
			}
		}
	}
	if ns != nil {
		d.CompletionLatency.P50Millis = ns[0] / 1e6
		d.CompletionLatency.P99Millis = ns[1] / 1e6
		d.CompletionLatency.P999Millis = ns[2] / 1e6
	}
	return d, true
}

// pickPercentiles finds the wanted percentiles among fio's, whose keys are
// numbers printed with six decimals ("99.900000").
func pickPercentiles(m map[string]float64, want []float64) ([]float64, bool) {
	out := make([]float64, len(want))
	for i, w := range want {
		found := false
		for k, v := range m {
			p, err := strconv.ParseFloat(k, 64)
			if err == nil && math.Abs(p-w) < 1e-9 {
				out[i], found = v, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// errnoText names the errno values fio reports most often in a job's
// "error" field.
func errnoText(n int) string {
	switch n {
	case 5:
		return "I/O error"
	case 12:
		return "out of memory"
	case 13:
		return "permission denied"
	case 22:
		return "invalid argument, e.g. direct I/O unsupported"
	case 28:
		return "no space left on device"
	case 95:
		return "operation not supported"
	}
	return "errno " + strconv.Itoa(n)
}

// lastLine is the last non-empty line of fio's diagnostics.
func lastLine(b []byte) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := bytes.TrimSpace(lines[i]); len(l) > 0 {
			return string(l)
		}
	}
	return ""
}
