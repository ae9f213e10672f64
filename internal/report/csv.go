package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

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
	return append(h, "peak_vus", "peak_nopm", "knee_vus")
}()

// CSV writes one row per profile x step x repeat (repeat numbered from
// 1; a step without repeats gets one row with the repeat columns empty),
// with the step's summaries (n, mean, sd, min, max, cv as a fraction,
// 95% CI, high-variation flag), the ratio of the step's mean NOPM and
// TPM to the first profile's with its 95% CI (empty for the first
// profile and for steps the first profile lacks), and the profile's
// peak and knee. Numbers are plain decimals without separators.
func CSV(w io.Writer, in Input) error {
	v := newView(in)
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
			tail := []string{csvInt(p.Verdict.PeakVUs), csvFloat(p.Verdict.PeakNOPM), csvInt(p.Verdict.KneeVUs)}
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
	if s.HasCI() {
		out[2], out[5], out[6], out[7] = csvFloat(s.StdDev), strconv.FormatFloat(s.CV, 'f', 5, 64), csvFloat(s.CILo), csvFloat(s.CIHi)
	}
	return out
}

func csvRatio(r profile.RatioCI) []string {
	if !r.Defined {
		return []string{"", "", "", ""}
	}
	out := []string{strconv.FormatFloat(r.Ratio, 'f', 5, 64), "", "", ""}
	if r.HasCI && !r.Unbounded {
		out[1], out[2] = strconv.FormatFloat(r.Lo, 'f', 5, 64), strconv.FormatFloat(r.Hi, 'f', 5, 64)
	}
	if r.HasCI {
		out[3] = strconv.FormatBool(r.Significant)
	}
	return out
}
