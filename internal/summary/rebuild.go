package summary

import (
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
)

// Cache states of a rebuild.
const (
	CacheCold = "cold" // right after a cold restart: buffer pool and OS page cache empty
	CacheWarm = "warm" // right after another rebuild of the same index
)

// Rebuild is what an index rebuild (kind rebuild) stores as its summary.
type Rebuild struct {
	Table string `json:"table"`
	// Index is the index rebuilt (the largest of the table); empty when
	// every index was.
	Index      string `json:"index,omitempty"`
	AllIndexes bool   `json:"all_indexes"`
	// Indexes are the table's indexes with their sizes before the first
	// rebuild.
	Indexes []dialect.Index `json:"indexes"`
	// Rebuild is what ran, and what it rewrote.
	Rebuild dialect.Rebuild `json:"rebuild"`
	// CPUSource says whose CPU time ServerCPUSeconds is ("" when it was
	// not measured).
	CPUSource string         `json:"cpu_source,omitempty"`
	Phases    []RebuildPhase `json:"phases"`
	// Cold and Warm are the spread of the phases of each cache state
	// over the repeats (nil when there was none).
	Cold        *RebuildSpread `json:"cold,omitempty"`
	Warm        *RebuildSpread `json:"warm,omitempty"`
	Notes       []string       `json:"notes,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Monitor     Monitor        `json:"monitor"`
}

// RebuildPhase is one timed rebuild.
type RebuildPhase struct {
	Repeat int    `json:"repeat"` // from 1
	Cache  string `json:"cache"`  // CacheCold or CacheWarm
	// Restart is the cold restart before a cold phase; CacheDropped
	// whether the OS page cache was dropped in it.
	Restart      *Restart `json:"restart,omitempty"`
	CacheDropped bool     `json:"cache_dropped"`
	// ElapsedSeconds is the rebuild's wall-clock time, by oltplab's
	// clock around the statements.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// ServerCPUSeconds is the CPU time the server used meanwhile;
	// WaitSeconds is ElapsedSeconds minus it: the time the rebuild waited
	// (I/O, locks) rather than computed. Both nil when not measured.
	ServerCPUSeconds *float64 `json:"server_cpu_seconds,omitempty"`
	WaitSeconds      *float64 `json:"wait_seconds,omitempty"`
	// ServerIO is the block I/O the server's processes issued meanwhile,
	// all devices together, as its I/O cgroup counted it (nil when it is
	// not counted).
	ServerIO *sampler.IOCount `json:"server_io,omitempty"`
	// SizeAfterBytes is the size of what was rebuilt afterwards (-1 when
	// unknown).
	SizeAfterBytes int64 `json:"size_after_bytes"`
	// Window is the phase on the samples' time axis; Host what the host
	// sampler saw in it.
	Window Span                `json:"window"`
	Host   sampler.StepSummary `json:"host"`
	Error  string              `json:"error,omitempty"`
}

// RebuildSpread is the spread of one cache state's phases.
type RebuildSpread struct {
	Elapsed profile.Summary  `json:"elapsed_seconds"`
	CPU     *profile.Summary `json:"server_cpu_seconds,omitempty"`
	Wait    *profile.Summary `json:"wait_seconds,omitempty"`
}

// Restart is a managed server's restart before a cold rebuild, as stored
// (the stored form of instance.RestartReport).
type Restart struct {
	At   time.Time `json:"at"`
	Cold bool      `json:"cold"`
	// CacheDropped says whether the OS page cache was dropped (cold
	// restarts only); Note says why not.
	CacheDropped bool    `json:"cache_dropped"`
	Note         string  `json:"note,omitempty"`
	StopSeconds  float64 `json:"stop_seconds"`
	StartSeconds float64 `json:"start_seconds"`
}

// Headline is each cache state's mean elapsed time, with the share the
// rebuild waited when the server's CPU time is known.
func (s Rebuild) Headline() string {
	var parts []string
	for _, c := range []struct {
		name string
		s    *RebuildSpread
	}{{CacheCold, s.Cold}, {CacheWarm, s.Warm}} {
		if c.s == nil {
			continue
		}
		p := fmt.Sprintf("%s %.2f s", c.name, c.s.Elapsed.Mean)
		if c.s.CPU != nil && c.s.Elapsed.Mean > 0 {
			p += fmt.Sprintf(" (%.0f%% waited)", 100*c.s.Wait.Mean/c.s.Elapsed.Mean)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = append(parts, "no rebuild finished")
	}
	what := s.Index
	if s.AllIndexes {
		what = "all indexes"
	}
	return what + ": " + strings.Join(parts, ", ")
}

// Sampling is what the host sampler saw over the rebuilds.
func (s Rebuild) Sampling() *Monitor { return &s.Monitor }
