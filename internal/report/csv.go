package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
)

// csvHeader is the stable column list of CSV. Columns are only ever
// appended, never renamed or reordered.
var csvHeader = func() []string {
	h := []string{"profile_id", "label", "target", "dialect", "vus", "repeat", "run_id", "partial", "nopm", "tpm", "tpm_per_vu"}
	for _, m := range []string{"nopm", "tpm", "tpm_per_vu"} {
		for _, f := range []string{"n", "mean", "sd", "min", "max", "cv", "ci_lo", "ci_hi", "high_variation"} {
			h = append(h, m+"_"+f)
		}
	}
	for _, m := range []string{"nopm", "tpm"} {
		for _, f := range []string{"", "_lo", "_hi", "_significant"} {
			h = append(h, "ratio_"+m+f)
		}
	}
	h = append(h, "peak_vus", "peak_nopm", "knee_vus")
	h = append(h, hostCSVHeader()...)
	// Appended later: the run's cross-check verdict.
	return append(h, "suspect", "suspect_reasons")
}()

// hostCSVHeader names the host columns: CPU, data disk, one share column
// per wait class (of the closed set) and the engine's average waits as
// "label=ms" pairs joined by ";".
func hostCSVHeader() []string {
	h := []string{"host_cpu_busy_pct", "host_cpu_idle_pct", "host_cpu_iowait_pct", "host_data_device",
		"host_disk_iops", "host_disk_mbps", "host_disk_latency_ms", "host_disk_latency_p99_of_per_second_avg_ms"}
	for _, c := range waitClasses {
		h = append(h, "host_wait_share_"+c+"_pct")
	}
	return append(h, "host_avg_wait_ms",
		"host_disk_read_iops", "host_disk_write_iops", "host_disk_read_mbps", "host_disk_write_mbps",
		"host_own_read_iops", "host_own_write_iops")
}

// csvHost is the host columns of a step: all empty when it was not
// sampled; wait shares empty when the database was not sampled, and 0
// for a class the sampled sessions never were in.
func csvHost(h *HostFigures) []string {
	out := make([]string, 0, len(waitClasses)+15)
	if h == nil {
		return append(out, make([]string, cap(out))...)
	}
	out = append(out, csvFloat(h.CPUBusyPct), csvFloat(h.CPUIdlePct), csvFloat(h.CPUIOWaitPct), h.DataDevice,
		csvFloat(h.DiskIOPS), csvFloat(h.DiskMBps), csvFloat(h.DiskLatencyMillis), csvFloat(h.DiskLatencyP99Millis))
	for _, c := range waitClasses {
		if h.WaitSharePct == nil {
			out = append(out, "")
		} else {
			out = append(out, csvFloat(h.WaitSharePct[c]))
		}
	}
	var waits []string
	for _, l := range slices.Sorted(maps.Keys(h.AvgWaitMillis)) {
		waits = append(waits, l+"="+csvFloat(h.AvgWaitMillis[l]))
	}
	out = append(out, strings.Join(waits, ";"),
		csvFloat(h.DiskReadIOPS), csvFloat(h.DiskWriteIOPS), csvFloat(h.DiskReadMBps), csvFloat(h.DiskWriteMBps))
	if !h.OwnIO {
		return append(out, "", "")
	}
	return append(out, csvFloat(h.OwnReadIOPS), csvFloat(h.OwnWriteIOPS))
}

// CSV writes one row per profile x step x repeat (repeat numbered from
// 1; a step without repeats gets one row with the repeat columns empty),
// with the step's summaries (n, mean, sd, min, max, cv as a fraction,
// 95% CI, high-variation flag), the ratio of the step's mean NOPM and
// TPM to the first profile's with its 95% CI (empty for the first
// profile and for steps the first profile lacks), and the profile's
// peak and knee, then the step's host figures (empty when it was not
// sampled; see hostCSVHeader). Numbers are plain decimals without separators.
//
// Monitors have rows of another shape: an input of monitors only is
// written one row per monitor and second (monitorCSVHeader); profiles and
// monitors together are refused (ErrMixedCSV).
func CSV(w io.Writer, in Input) error {
	v := newView(in)
	switch {
	case len(v.monitors) > 0 && len(v.profiles) > 0:
		return ErrMixedCSV
	case len(v.monitors) > 0:
		return monitorCSV(w, v)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write csv header: %w", err)
	}
	for pi, p := range v.profiles {
		for _, s := range p.Steps {
			var ratio []string
			if pi == 0 {
				ratio = make([]string, 8)
			} else {
				rn, rt, ok := v.ratios(pi, s.VUs)
				if !ok {
					rn, rt = profile.RatioCI{}, profile.RatioCI{}
				}
				ratio = append(csvRatio(rn), csvRatio(rt)...)
			}
			common := []string{strconv.FormatInt(p.ID, 10), p.Label, p.Target, p.Dialect, strconv.Itoa(s.VUs)}
			summaries := append(append(csvSummary(s.NOPM), csvSummary(s.TPM)...), csvSummary(s.TPMPerVU)...)
			tail := append([]string{csvInt(p.Verdict.PeakVUs), csvFloat(p.Verdict.PeakNOPM), csvInt(p.Verdict.KneeVUs)}, csvHost(s.Host)...)
			repeats := s.Repeats
			if len(repeats) == 0 {
				repeats = []Repeat{{}}
			}
			for ri, r := range repeats {
				rec := append([]string(nil), common...)
				if len(s.Repeats) == 0 {
					rec = append(rec, "", "", "", "", "", "")
				} else {
					perVU := ""
					if s.VUs > 0 {
						perVU = csvFloat(r.TPM / float64(s.VUs))
					}
					rec = append(rec, strconv.Itoa(ri+1), strconv.FormatInt(r.RunID, 10), strconv.FormatBool(r.Partial),
						csvFloat(r.NOPM), csvFloat(r.TPM), perVU)
				}
				rec = append(append(append(rec, summaries...), ratio...), tail...)
				if len(s.Repeats) == 0 {
					rec = append(rec, "", "")
				} else {
					rec = append(rec, strconv.FormatBool(r.Suspect), strings.Join(r.Reasons, "; "))
				}
				if err := cw.Write(rec); err != nil {
					return fmt.Errorf("write csv row for %s at %d VUs: %w", p.Name, s.VUs, err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// ErrMixedCSV: profiles and monitors have rows of different shapes and
// cannot share one CSV file.
var ErrMixedCSV = errors.New("profiles and monitors cannot share one CSV file: export them separately, or as JSON")

// csvFloat formats with three decimals: stable across platforms (no
// last-bit noise from fused multiply-add) and precise enough for
// transactions per minute.
func csvFloat(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func csvInt(i int) string {
	if i == 0 {
		return ""
	}
	return strconv.Itoa(i)
}

func csvSummary(s profile.Summary) []string {
	if s.N == 0 {
		return []string{"0", "", "", "", "", "", "", "", ""}
	}
	out := []string{strconv.Itoa(s.N), csvFloat(s.Mean), "", csvFloat(s.Min), csvFloat(s.Max), "", "", "", strconv.FormatBool(s.HighVariation)}
	if s.N >= 2 {
		out[2], out[5] = csvFloat(s.StdDev), strconv.FormatFloat(s.CV, 'f', 5, 64)
	}
	if s.HasCI() {
		out[6], out[7] = csvFloat(s.CILo), csvFloat(s.CIHi)
	}
	return out
}

func csvRatio(r profile.RatioCI) []string {
	if !r.Defined {
		return []string{"", "", "", ""}
	}
	out := []string{strconv.FormatFloat(r.Ratio, 'f', 5, 64), "", "", ""}
	if r.HasCI {
		out[1], out[2] = strconv.FormatFloat(r.Lo, 'f', 5, 64), strconv.FormatFloat(r.Hi, 'f', 5, 64)
		out[3] = strconv.FormatBool(r.Significant)
	}
	return out
}
