package summary

import (
	"encoding/json"
	"fmt"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/store"
)

// Run is what a timed run (kind run) stores as its summary: the driver's
// result and, beside it, what the samplers saw in the measured window.
type Run struct {
	Version int `json:"summary_version"`
	*driver.Result
	Monitor *Monitor `json:"monitor,omitempty"`
}

// RunVersion is the version of the run summary format that this oltplab
// writes. Version 0 is the format written before the version was
// recorded: the same as version 1 without driver.Result.EmbeddedDatabase.
// testdata/run-summary-v*.json keep one summary of each version, decoded
// by TestDecodeRun.
const RunVersion = 1

// DecodeRun reads a stored run summary of any version up to RunVersion; a
// newer one, written by a newer oltplab, is refused rather than misread.
func DecodeRun(raw []byte) (Run, error) {
	s := Run{Result: &driver.Result{}}
	if err := json.Unmarshal(raw, &s); err != nil {
		return Run{}, err
	}
	if err := checkVersion(store.KindRun, s.Version); err != nil {
		return Run{}, err
	}
	return s, nil
}

// Headline is the run's figure: tpmC when the tpc-c mode's checks all
// passed, its New-Order rate when they did not, else NOPM and TPM.
func (s Run) Headline() string {
	r := s.Result
	if r == nil {
		return ""
	}
	th := profile.FormatThousands
	switch {
	case r.Spec != nil && r.Spec.TpmC != nil:
		return fmt.Sprintf("tpmC %s (%.1f%% of %s), NOPM %s, TPM %s", th(*r.Spec.TpmC), r.Spec.EfficiencyPct,
			th(r.Spec.MaxNewOrdersPerMinute), th(r.NOPM), th(r.TPM))
	case r.Spec != nil:
		return fmt.Sprintf("New-Orders/min %s (not tpmC: checks failed, %.1f%% of %s), NOPM %s, TPM %s", th(r.Spec.NewOrdersPerMinute),
			r.Spec.EfficiencyPct, th(r.Spec.MaxNewOrdersPerMinute), th(r.NOPM), th(r.TPM))
	}
	return fmt.Sprintf("NOPM %s, TPM %s", th(r.NOPM), th(r.TPM))
}

// Sampling is what the samplers saw in the measured window.
func (s Run) Sampling() *Monitor { return s.Monitor }

// The workload series of a run (source workload), one sample per second
// of the measured window: the metric names of the results store.
const (
	MetricTPM       = "tpm"
	MetricNOPM      = "nopm"
	MetricErrors    = "errors"
	MetricP50Millis = "p50_ms"
	MetricP99Millis = "p99_ms"
)

// WorkloadSamples turns a run's per-second series into stored samples.
func WorkloadSamples(res *driver.Result) []store.Sample {
	out := make([]store.Sample, 0, len(res.Series)*5)
	for _, s := range res.Series {
		t := s.T.Milliseconds()
		add := func(metric string, v float64) {
			out = append(out, store.Sample{TMillis: t, Source: store.SourceWorkload, Metric: metric, Value: v})
		}
		add(MetricTPM, s.TPM)
		add(MetricNOPM, s.NOPM)
		add(MetricErrors, float64(s.Errors))
		add(MetricP50Millis, float64(s.P50Micros)/1000)
		add(MetricP99Millis, float64(s.P99Micros)/1000)
	}
	return out
}
