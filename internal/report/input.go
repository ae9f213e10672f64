package report

import (
	"time"

	"github.com/oltplab/oltplab/internal/profile"
)

// Input is everything a report shows: one or more profiles, the first
// being the baseline every ratio is taken against.
type Input struct {
	Title     string    `json:"title"`
	Generated time.Time `json:"generated"`
	// Version is the oltplab version (and revision) that rendered the
	// report, shown in the footer.
	Version  string    `json:"version"`
	Profiles []Profile `json:"profiles"`
}

// Profile is one virtual-user sweep (one `oltplab run ... --label`).
type Profile struct {
	ID    int64  `json:"id"`
	Label string `json:"label"`
	// Target is the display form of the database target. It must already
	// be redacted (dialect.Target's String form); the renderers blank
	// any URL password they still find, as a last line of defence.
	Target  string `json:"target"`
	Dialect string `json:"dialect"`
	// Mode labels how the profile paced its users ("tproc-c (no keying
	// or think time)", "tpc-c (keying and think times, ...)"): figures of
	// different modes measure different things.
	Mode string `json:"mode,omitempty"`
	// Context is the profile's context flattened to key/value (host.*,
	// db.*, param.*): the keys whose values differ between profiles are
	// highlighted. It must hold no secrets.
	Context map[string]string `json:"context,omitempty"`
	Steps   []Step            `json:"steps"`
	// Verdict is profile.Analyze of the steps (see Profile.StepFigures);
	// the caller computes it so that it can choose the threshold.
	Verdict profile.Verdict `json:"verdict"`
	// Series is the per-second series of one chosen run (nil when none).
	Series *StepSeries `json:"series,omitempty"`
}

// Step is one virtual-user (or tpc-c terminal) count of a profile with
// its repeats.
type Step struct {
	VUs     int      `json:"vus"`
	Repeats []Repeat `json:"repeats"`
	// NOPM, TPM and TPMPerVU summarise the repeats that count (NewStep
	// leaves partial repeats out).
	NOPM     profile.Summary `json:"nopm"`
	TPM      profile.Summary `json:"tpm"`
	TPMPerVU profile.Summary `json:"tpm_per_vu"`
	// Latency holds the latency percentiles per transaction kind
	// ("new_order", "payment", ...), over all counted repeats.
	Latency map[string]LatencyFigures `json:"latency,omitempty"`
	// Host holds host and database figures when they were sampled; nil
	// for runs measured without samplers.
	Host *HostFigures `json:"host,omitempty"`
}

// Repeat is one measured run of a step.
type Repeat struct {
	RunID int64   `json:"run_id"`
	NOPM  float64 `json:"nopm"`
	TPM   float64 `json:"tpm"`
	// Partial marks a run that did not complete its timed window (it was
	// interrupted or failed); it is shown but not summarised.
	Partial bool `json:"partial"`
}

// LatencyFigures are the latency percentiles of one transaction kind.
type LatencyFigures struct {
	P95Millis float64 `json:"p95_ms"`
	P99Millis float64 `json:"p99_ms"`
}

// NewStep summarises the complete (non-partial) repeats of one step:
// NOPM, TPM and TPM per virtual user, each with profile.Summarize.
func NewStep(vus int, repeats []Repeat, latency map[string]LatencyFigures) Step {
	var nopm, tpm, perVU []float64
	for _, r := range repeats {
		if r.Partial {
			continue
		}
		nopm = append(nopm, r.NOPM)
		tpm = append(tpm, r.TPM)
		if vus > 0 {
			perVU = append(perVU, r.TPM/float64(vus))
		}
	}
	return Step{
		VUs:      vus,
		Repeats:  repeats,
		NOPM:     profile.Summarize(nopm),
		TPM:      profile.Summarize(tpm),
		TPMPerVU: profile.Summarize(perVU),
		Latency:  latency,
	}
}

// StepFigures converts the steps of p for profile.Analyze, taking the
// p99 latency of transaction kind latencyKind (0 when the kind is
// absent, which disables the latency rule).
func (p Profile) StepFigures(latencyKind string) []profile.StepFigures {
	out := make([]profile.StepFigures, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = profile.StepFigures{VUs: s.VUs, NOPM: s.NOPM, TPM: s.TPM, P99Millis: s.Latency[latencyKind].P99Millis}
	}
	return out
}
