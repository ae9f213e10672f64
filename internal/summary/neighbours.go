package summary

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
)

// Phase names.
const (
	PhaseBaseline = "baseline"
	PhaseNoisy    = "noisy"
)

// Neighbours is what a noisy-neighbour scenario stores as its
// summary. Times on the samples' axis are milliseconds since the
// scenario started.
type Neighbours struct {
	Noise    string   `json:"noise"`
	Noisy    []string `json:"noisy"`
	Victims  []string `json:"victims"`
	Cycles   int      `json:"cycles"`
	Interval float64  `json:"interval_seconds"`
	// Device is the block device the instances' data share (the one
	// under most of them), sampled second by second; Shared says every
	// instance's data is on it.
	Device string `json:"device"`
	Shared bool   `json:"shared"`
	// DeviceRoles maps each sampled device to the directories on it
	// ("data:n1", "noise:n3").
	DeviceRoles map[string][]string `json:"device_roles,omitempty"`
	Phases      []NeighbourPhase    `json:"phases"`
	Instances   []InstancePhase     `json:"instances"`
	Losses      []VictimLoss        `json:"losses"`
	// WhileNoisy are the victims' rates while the noise ran against
	// between its cycles, within the noisy phase.
	WhileNoisy []WhileNoisy       `json:"while_noisy"`
	NoiseRuns  []NoiseCycleResult `json:"noise_cycles"`
	// NoiseSeconds summarises the noise cycles' durations.
	NoiseSeconds profile.Summary `json:"noise_seconds"`
	Interrupted  bool            `json:"interrupted,omitempty"`
	Monitor      Monitor         `json:"monitor"`
	// CI says how the confidence intervals were made.
	CI string `json:"ci"`
}

// NeighbourPhase is one phase: its synchronised window and what the
// shared device did in it.
type NeighbourPhase struct {
	Name      string                 `json:"name"`
	WindowRun int64                  `json:"window_run_id"`
	Window    Span                   `json:"window"`
	Targets   []string               `json:"targets"`
	SkewMs    float64                `json:"max_skew_ms"`
	SkewOver  bool                   `json:"skew_exceeded"`
	Complete  bool                   `json:"complete"`
	Device    *sampler.DeviceSummary `json:"device,omitempty"`
	CPU       sampler.CPUSummary     `json:"cpu"`
}

// InstancePhase is one instance's load in one phase: NOPM and TPM from
// its database's counters, each with a 95% confidence interval from
// batch means (see Neighbours.CI).
type InstancePhase struct {
	Name   string          `json:"name"`
	Phase  string          `json:"phase"`
	Role   string          `json:"role"` // "victim" or "noisy"
	RunID  int64           `json:"run_id"`
	Status store.Status    `json:"status"`
	NOPM   profile.Summary `json:"nopm"`
	TPM    profile.Summary `json:"tpm"`
	// Batches is the number of batches behind the intervals and
	// BatchSeconds their length.
	Batches      int     `json:"batches"`
	BatchSeconds float64 `json:"batch_seconds"`
}

// VictimLoss is one victim's loss against its baseline: 1 − noisy /
// baseline, in percent, with the interval of the ratio (profile.Ratio).
type VictimLoss struct {
	Name        string  `json:"name"`
	NOPMLossPct float64 `json:"nopm_loss_pct"`
	NOPMLo      float64 `json:"nopm_loss_lo_pct"`
	NOPMHi      float64 `json:"nopm_loss_hi_pct"`
	TPMLossPct  float64 `json:"tpm_loss_pct"`
	TPMLo       float64 `json:"tpm_loss_lo_pct"`
	TPMHi       float64 `json:"tpm_loss_hi_pct"`
	// HasCI: both phases had profile.MinRepeats batches or more (two,
	// before oltplab drew no interval from fewer); Unbounded: Fieller's
	// interval, which oltplab used before it took ratios on the log
	// scale, had no finite end (never set now); TooFew: a side had fewer
	// than profile.MinRepeats batches, too few to conclude; Significant:
	// it excludes no loss, on enough batches.
	HasCI       bool `json:"has_ci"`
	Unbounded   bool `json:"unbounded,omitempty"`
	TooFew      bool `json:"too_few,omitempty"`
	Significant bool `json:"significant"`
	// Suspect: a phase's run of the victim is suspect (its database
	// figures disagreed with the driver's own counts); the loss is shown
	// but left out of headlines unless suspect runs are included.
	Suspect bool `json:"suspect,omitempty"`
}

// WhileNoisy is one victim in the noisy phase: its rates while a noise
// cycle ran against between cycles, cycle by cycle (the driver's
// per-second counts), and the loss while the noise runs, 1 − during /
// between in percent, with the ratio's interval over the cycles. Unlike
// the loss against the baseline it compares seconds with the same
// instances loaded: the noisy instances' own load, stopped in the noisy
// phase, does not count in it.
type WhileNoisy struct {
	Name        string          `json:"name"`
	NOPMDuring  profile.Summary `json:"nopm_during"`
	NOPMBetween profile.Summary `json:"nopm_between"`
	TPMDuring   profile.Summary `json:"tpm_during"`
	TPMBetween  profile.Summary `json:"tpm_between"`
	NOPMLossPct float64         `json:"nopm_loss_pct"`
	NOPMLo      float64         `json:"nopm_loss_lo_pct"`
	NOPMHi      float64         `json:"nopm_loss_hi_pct"`
	TPMLossPct  float64         `json:"tpm_loss_pct"`
	TPMLo       float64         `json:"tpm_loss_lo_pct"`
	TPMHi       float64         `json:"tpm_loss_hi_pct"`
	HasCI       bool            `json:"has_ci"`
	Unbounded   bool            `json:"unbounded,omitempty"`
	TooFew      bool            `json:"too_few,omitempty"`
	Significant bool            `json:"significant"`
}

// NoiseCycleResult is one noise cycle of one noisy instance.
type NoiseCycleResult struct {
	Target  string    `json:"target"`
	Cycle   int       `json:"cycle"`
	Due     time.Time `json:"due"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Seconds float64   `json:"seconds"`
	Bytes   int64     `json:"bytes"`
	MBps    float64   `json:"mb_per_s"`
	Window  Span      `json:"window"`
	// InWindow: the cycle ended within the victims' measured window.
	InWindow bool                   `json:"in_window"`
	Device   *sampler.DeviceSummary `json:"device,omitempty"`
	Error    string                 `json:"error,omitempty"`
	Detail   json.RawMessage        `json:"detail,omitempty"`
}

// Headline sums up a noisy-neighbour scenario in a line: first what the
// scenario exists for, each victim's NOPM while the backups ran against
// between them; then its loss against the baseline phase (where the
// noisy instances ran the load too, so a victim may gain); and the
// noise's cycles. A negative loss is said as a gain; an interval too
// wide to mean anything is said to be so rather than printed.
func (s Neighbours) Headline() string {
	if len(s.Phases) == 0 {
		return ""
	}
	var during []string
	for _, w := range s.WhileNoisy {
		during = append(during, w.Name+" "+LossWords(w.NOPMLossPct)+lossInterval(w.HasCI, w.NOPMLo, w.NOPMHi))
	}
	var parts, suspect []string
	for _, l := range s.Losses {
		if l.Suspect {
			suspect = append(suspect, l.Name)
			continue
		}
		parts = append(parts, l.Name+" "+LossWords(l.NOPMLossPct)+lossInterval(l.HasCI, l.NOPMLo, l.NOPMHi))
	}
	var hs []string
	if len(during) > 0 {
		hs = append(hs, "victims' NOPM while backups ran: "+strings.Join(during, ", "))
	}
	h := "against the baseline phase: " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		h = "no victim measured in both phases"
	}
	if len(suspect) > 0 {
		h += fmt.Sprintf(" (SUSPECT, left out: %s)", strings.Join(suspect, ", "))
	}
	hs = append(hs, h)
	if n := s.NoiseSeconds.N; n > 0 {
		hs = append(hs, fmt.Sprintf("%d backup(s), %.1f s on average", n, s.NoiseSeconds.Mean))
	}
	return strings.Join(hs, "; ")
}

// LossWords says a loss in percent in words: "lost 13.2%", and a
// negative loss as what it is, "gained 5.0%" (the victim was faster).
func LossWords(lossPct float64) string {
	if lossPct < 0 {
		return "gained " + pct(-lossPct)
	}
	return "lost " + pct(lossPct)
}

// LossTooWide reports whether a loss's 95% interval, in percent, is too
// wide to say anything about the loss: it spans more than 100
// percentage points (a ratio of the two rates known only to within a
// factor of about two or worse).
func LossTooWide(lo, hi float64) bool { return hi-lo > 100 }

// lossInterval is a loss's interval for a headline: " (22.9% to 73.2%)",
// or what a too wide one means.
func lossInterval(has bool, lo, hi float64) string {
	switch {
	case !has:
		return ""
	case LossTooWide(lo, hi):
		return " (interval too wide to conclude)"
	}
	return fmt.Sprintf(" (%s to %s)", pct(lo), pct(hi))
}

// Sampling is what the host sampler saw over the whole scenario.
func (s Neighbours) Sampling() *Monitor { return &s.Monitor }

func pct(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + "%" }
