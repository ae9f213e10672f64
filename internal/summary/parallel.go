package summary

import (
	"fmt"
	"math"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/store"
)

// ParallelWindow is one measured window synchronised over several targets
// as stored (the summary of its run of kind parallel): every target's
// run, when each window really started and ended, how far apart they
// were, and the totals.
type ParallelWindow struct {
	RunID  int64  `json:"run_id"`
	Phase  string `json:"phase,omitempty"`
	Repeat int    `json:"repeat"`
	// Released is when the last target had opened its sessions and all
	// started together; the measured window was planned from
	// PlannedStart (Released plus the ramp-up) to PlannedEnd.
	Released     time.Time      `json:"released"`
	PlannedStart time.Time      `json:"planned_start"`
	PlannedEnd   time.Time      `json:"planned_end"`
	Targets      []WindowTarget `json:"targets"`
	// StartSkewMillis and EndSkewMillis are the spread (latest minus
	// earliest) of the targets' actual window starts and ends;
	// MaxSkewMillis the larger. SkewExceeded marks a window whose skew is
	// above SkewToleranceMillis: its total sums windows that were not the
	// same interval.
	StartSkewMillis     float64 `json:"start_skew_ms"`
	EndSkewMillis       float64 `json:"end_skew_ms"`
	MaxSkewMillis       float64 `json:"max_skew_ms"`
	SkewToleranceMillis float64 `json:"skew_tolerance_ms"`
	SkewExceeded        bool    `json:"skew_exceeded"`
	// TotalNOPM and TotalTPM sum the targets' figures, each from its own
	// database's counters; NOPM and TPM are their spread between targets
	// (min, max, CV). Only targets that measured the whole window count;
	// Complete says all did. Suspect says a target's database figures
	// disagreed with the driver's own counts (its run is stored suspect):
	// the totals then hold a figure that cannot be trusted, and the
	// window counts in statistics only when suspect runs are included.
	TotalNOPM float64         `json:"total_nopm"`
	TotalTPM  float64         `json:"total_tpm"`
	NOPM      profile.Summary `json:"nopm"`
	TPM       profile.Summary `json:"tpm"`
	Complete  bool            `json:"complete"`
	Suspect   bool            `json:"suspect,omitempty"`
}

// WindowTarget is one target's run in a synchronised window.
type WindowTarget struct {
	Name   string       `json:"name"`
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	// Start and End are the target's actual measured window; the offsets
	// are from the planned one.
	Start             time.Time `json:"start"`
	End               time.Time `json:"end"`
	StartOffsetMillis float64   `json:"start_offset_ms"`
	EndOffsetMillis   float64   `json:"end_offset_ms"`
	NOPM              float64   `json:"nopm"`
	TPM               float64   `json:"tpm"`
	TPMSource         string    `json:"tpm_source,omitempty"`
	Error             string    `json:"error,omitempty"`
	// Suspect holds why the target's database figures disagreed with the
	// driver's own counts (driver.Result.Suspect); its status is then
	// suspect.
	Suspect []string `json:"suspect,omitempty"`
	// Result is the target's driver result, for callers (not stored
	// here: its run holds it).
	Result *driver.Result `json:"-"`
}

// Whole reports whether the target measured the whole window with
// figures that may count (its status ok or suspect).
func (t WindowTarget) Whole() bool {
	return t.Status == store.StatusOK || t.Status == store.StatusSuspect
}

// Runs are the ids of the window's run and its targets' runs.
func (w ParallelWindow) Runs() []int64 {
	ids := []int64{w.RunID}
	for _, t := range w.Targets {
		if t.RunID != 0 {
			ids = append(ids, t.RunID)
		}
	}
	return ids
}

// Headline is the window's totals, skew and marks.
func (w ParallelWindow) Headline() string {
	if len(w.Targets) == 0 {
		return ""
	}
	h := fmt.Sprintf("total NOPM %s, TPM %s over %d target(s); windows %.0f ms apart", profile.FormatThousands(w.TotalNOPM),
		profile.FormatThousands(w.TotalTPM), len(w.Targets), w.MaxSkewMillis)
	if w.Phase != "" {
		h = w.Phase + ": " + h
	}
	if w.SkewExceeded {
		h += " (ABOVE THE TOLERANCE)"
	}
	if !w.Complete {
		h += "; incomplete"
	}
	if w.Suspect {
		h += "; SUSPECT"
	}
	return h
}

// Sampling: a window samples nothing of its own (its targets' runs do).
func (w ParallelWindow) Sampling() *Monitor { return nil }

// ParallelStats summarise synchronised windows: each target's NOPM and
// TPM over the complete windows (suspect ones only when asked), the
// totals' and the largest skew.
type ParallelStats struct {
	Targets   []TargetStats   `json:"targets"`
	TotalNOPM profile.Summary `json:"total_nopm"`
	TotalTPM  profile.Summary `json:"total_tpm"`
	// Windows counts the windows given, Complete those every target
	// measured completely (only they are summarised), Suspect the
	// complete ones with a suspect target (summarised only when asked),
	// SkewExceeded those marked for their skew, against the largest
	// tolerance a window had (SkewToleranceMillis).
	Windows             int     `json:"windows"`
	Complete            int     `json:"complete"`
	Suspect             int     `json:"suspect"`
	SkewExceeded        int     `json:"skew_exceeded"`
	MaxSkewMillis       float64 `json:"max_skew_ms"`
	SkewToleranceMillis float64 `json:"skew_tolerance_ms"`
	// IncludeSuspect: the complete windows with a suspect target are
	// summarised too.
	IncludeSuspect bool `json:"include_suspect"`
}

// TargetStats is one target's figures over windows.
type TargetStats struct {
	Name string          `json:"name"`
	NOPM profile.Summary `json:"nopm"`
	TPM  profile.Summary `json:"tpm"`
}

// SummarizeWindows summarises the complete windows of ws, targets in the
// order of the first window; a window with a suspect target counts only
// with includeSuspect.
func SummarizeWindows(ws []ParallelWindow, includeSuspect bool) ParallelStats {
	st := ParallelStats{Windows: len(ws), IncludeSuspect: includeSuspect}
	var order []string
	nopm, tpm := map[string][]float64{}, map[string][]float64{}
	var totN, totT []float64
	for _, w := range ws {
		st.MaxSkewMillis = math.Max(st.MaxSkewMillis, w.MaxSkewMillis)
		st.SkewToleranceMillis = math.Max(st.SkewToleranceMillis, w.SkewToleranceMillis)
		if w.SkewExceeded {
			st.SkewExceeded++
		}
		for _, t := range w.Targets {
			if _, seen := nopm[t.Name]; !seen {
				order = append(order, t.Name)
				nopm[t.Name], tpm[t.Name] = nil, nil
			}
		}
		if !w.Complete {
			continue
		}
		st.Complete++
		if w.Suspect {
			st.Suspect++
			if !includeSuspect {
				continue
			}
		}
		for _, t := range w.Targets {
			nopm[t.Name] = append(nopm[t.Name], t.NOPM)
			tpm[t.Name] = append(tpm[t.Name], t.TPM)
		}
		totN, totT = append(totN, w.TotalNOPM), append(totT, w.TotalTPM)
	}
	for _, n := range order {
		st.Targets = append(st.Targets, TargetStats{Name: n, NOPM: profile.Summarize(nopm[n]), TPM: profile.Summarize(tpm[n])})
	}
	st.TotalNOPM, st.TotalTPM = profile.Summarize(totN), profile.Summarize(totT)
	return st
}

// Headline is the windows' mean totals, their largest skew and what was
// left out, in the words of a window's headline.
func (st ParallelStats) Headline() string {
	h := fmt.Sprintf("total NOPM %s, TPM %s over %d target(s); windows at most %.0f ms apart",
		profile.FormatThousands(st.TotalNOPM.Mean), profile.FormatThousands(st.TotalTPM.Mean), len(st.Targets), st.MaxSkewMillis)
	if st.SkewExceeded > 0 {
		h += fmt.Sprintf(" (%d window(s) above the tolerance of %.0f ms)", st.SkewExceeded, st.SkewToleranceMillis)
	}
	if st.Suspect > 0 && !st.IncludeSuspect {
		h += fmt.Sprintf("; %d window(s) with a suspect target left out", st.Suspect)
	}
	return h
}
