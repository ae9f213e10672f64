package summary

import (
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/sampler"
)

// Storage is what a storage benchmark (kind storage) stores as its
// summary: the plan's facts, each finished profile with its span on the
// samples' time axis and what the host did in it, and the whole run's
// host summary.
type Storage struct {
	FioVersion    string           `json:"fio_version"`
	Dir           string           `json:"dir"`
	FileSizeBytes int64            `json:"file_size_bytes"`
	SizeFrom      string           `json:"size_from"`
	DirectIO      bool             `json:"direct_io"`
	Notes         []string         `json:"notes,omitempty"`
	Layout        *Span            `json:"layout,omitempty"`
	Profiles      []StorageProfile `json:"profiles"`
	Interrupted   bool             `json:"interrupted,omitempty"`
	Monitor       Monitor          `json:"monitor"`
}

// StorageProfile is one finished fio profile as stored: the stored form
// of fio.ProfileResult (what was planned, when it ran, what fio
// reported), with its span and what the host sampler saw in it.
type StorageProfile struct {
	// Profile, Description, RuntimeSeconds, Options and Command are what
	// was planned (fio.PlannedProfile): Options are fio's job options as
	// "key=value", in the order given.
	Profile        string   `json:"profile"`
	Description    string   `json:"description"`
	RuntimeSeconds int      `json:"runtime_s"`
	Options        []string `json:"options"`
	Command        []string `json:"command"`
	// Started and Ended are when fio ran (fio.Phase).
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// FioVersion to SystemCPUPct are fio's report (fio.Report): the
	// directions that did I/O, read before write, and fio's own CPU use
	// (percent of one CPU, summed over its jobs).
	FioVersion   string             `json:"fio_version"`
	Jobs         int                `json:"jobs"`
	Directions   []StorageDirection `json:"directions"`
	UserCPUPct   float64            `json:"fio_user_cpu_pct"`
	SystemCPUPct float64            `json:"fio_system_cpu_pct"`
	Window       Span               `json:"window"`
	// Host is what the host sampler saw during the profile (the kernel's
	// view of the device, next to fio's).
	Host sampler.StepSummary `json:"host"`
	// LatencyLayer is what the latency layer under the directory measured
	// during the profile (fio ran inside it), nil without one.
	LatencyLayer *LatencyLayer `json:"latency_layer,omitempty"`
}

// StorageDirection is the I/O of one direction of a profile (the stored
// form of fio.Direction).
type StorageDirection struct {
	Direction string  `json:"direction"` // "read" or "write"
	IOPS      float64 `json:"iops"`
	// MBPerSec is in 10^6 bytes per second, MiBPerSec in 2^20.
	BytesPerSec       float64        `json:"bytes_per_s"`
	MBPerSec          float64        `json:"mb_per_s"`
	MiBPerSec         float64        `json:"mib_per_s"`
	TotalBytes        int64          `json:"total_bytes"`
	TotalIOs          int64          `json:"total_ios"`
	RuntimeMillis     int64          `json:"runtime_ms"`
	CompletionLatency StorageLatency `json:"completion_latency"`
}

// StorageLatency is fio's completion latency of one direction, in
// milliseconds (the stored form of fio.Latency). PercentileSource says
// where the percentiles come from ("" when there are none: they are 0).
type StorageLatency struct {
	MeanMillis       float64 `json:"mean_ms"`
	MaxMillis        float64 `json:"max_ms"`
	P50Millis        float64 `json:"p50_ms"`
	P99Millis        float64 `json:"p99_ms"`
	P999Millis       float64 `json:"p99_9_ms"`
	PercentileSource string  `json:"percentile_source"`
}

// Headline is each finished profile's IOPS by direction.
func (s Storage) Headline() string {
	var parts []string
	for _, p := range s.Profiles {
		var ds []string
		for _, d := range p.Directions {
			ds = append(ds, fmt.Sprintf("%s %.0f IOPS", d.Direction, d.IOPS))
		}
		parts = append(parts, p.Profile+" "+strings.Join(ds, ", "))
	}
	return strings.Join(parts, "; ")
}

// Sampling is what the host sampler saw over the benchmark.
func (s Storage) Sampling() *Monitor { return &s.Monitor }
