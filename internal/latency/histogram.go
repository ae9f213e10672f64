package latency

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to 60 s with 3
// significant digits, as the driver records transactions.
const (
	histMinMicros = 1
	histMaxMicros = 60_000_000
	histDigits    = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinMicros, histMaxMicros, histDigits)
}

func micros(d time.Duration) int64 {
	return min(max(d.Microseconds(), histMinMicros), histMaxMicros)
}

// recorder keeps, for one mount, what each kind of operation took as the
// server saw it (Seen: from the moment the layer took the request to its
// reply, the delay included) and the layer's own part of it (Own: Seen
// less the delay drawn), with the delays drawn and the failures. One lock
// per kind: requests of different kinds do not wait for each other.
type recorder struct {
	kinds [NumKinds]kindRecorder
}

type kindRecorder struct {
	mu      sync.Mutex
	seen    *hdrhistogram.Histogram
	own     *hdrhistogram.Histogram
	delayed time.Duration
	errors  int64
}

func newRecorder() *recorder {
	r := &recorder{}
	for i := range r.kinds {
		r.kinds[i].seen, r.kinds[i].own = newHistogram(), newHistogram()
	}
	return r
}

// record records one operation of kind k that took took, delay of it
// the delay drawn; failed when it returned an error.
func (r *recorder) record(k Kind, took, delay time.Duration, failed bool) {
	kr := &r.kinds[k]
	kr.mu.Lock()
	_ = kr.seen.RecordValue(micros(took))
	_ = kr.own.RecordValue(micros(took - delay))
	kr.delayed += delay
	if failed {
		kr.errors++
	}
	kr.mu.Unlock()
}

// snapshot copies the recorder's figures (cumulative since the start).
func (r *recorder) snapshot() *MountFigures {
	m := &MountFigures{}
	for k := range r.kinds {
		kr := &r.kinds[k]
		kr.mu.Lock()
		m.Kinds[k] = KindFigures{Seen: kr.seen.Clone(), Own: kr.own.Clone(), Delayed: kr.delayed, Errors: kr.errors}
		kr.mu.Unlock()
	}
	return m
}

// KindFigures are one kind of operation on one mount: cumulative since
// the layer started in a Snapshot, over a window in a Window.
type KindFigures struct {
	// Seen is what each operation took as the server saw it: from the
	// moment the layer took the request to its reply, the delay included
	// (microseconds). The kernel's own part of a FUSE request (a few µs
	// each way) is not in it.
	Seen *hdrhistogram.Histogram
	// Own is Seen less the delay drawn: the pass-through's own time.
	Own *hdrhistogram.Histogram
	// Delayed is the sum of the delays drawn.
	Delayed time.Duration
	// Errors counts operations that failed (their time is in Seen too).
	Errors int64
}

// MountFigures are the figures of one mounted directory, by kind.
type MountFigures struct {
	Kinds [NumKinds]KindFigures
}

// Snapshot is a layer's figures at one moment, cumulative since it
// started: take one when a run's window opens and one when it closes,
// and Since gives the window's.
type Snapshot struct {
	At time.Time
	// CPUSeconds is the CPU time (user and system) the layer's process
	// used since it started: the cost of the layer, counted here since
	// it is in no instance's cgroup and not in oltplab's own process.
	CPUSeconds float64
	// Mounts are the figures by directory role ("data", "wal").
	Mounts map[string]*MountFigures
}

// Window is a layer's figures over an interval: what happened between
// two snapshots.
type Window struct {
	Start, End time.Time
	CPUSeconds float64
	Mounts     map[string]*MountFigures
}

// Since is what happened between earlier and s. Histograms are
// subtracted bucket by bucket: both come from the same layer.
func (s Snapshot) Since(earlier Snapshot) (Window, error) {
	w := Window{Start: earlier.At, End: s.At, CPUSeconds: s.CPUSeconds - earlier.CPUSeconds, Mounts: map[string]*MountFigures{}}
	for role, m := range s.Mounts {
		e := earlier.Mounts[role]
		out := &MountFigures{}
		for k := range m.Kinds {
			cur := m.Kinds[k]
			if e == nil {
				out.Kinds[k] = KindFigures{Seen: cur.Seen.Clone(), Own: cur.Own.Clone(), Delayed: cur.Delayed, Errors: cur.Errors}
				continue
			}
			prev := e.Kinds[k]
			seen, err := subtract(cur.Seen, prev.Seen)
			if err != nil {
				return w, fmt.Errorf("%s %s: %w", role, Kind(k), err)
			}
			own, err := subtract(cur.Own, prev.Own)
			if err != nil {
				return w, fmt.Errorf("%s %s: %w", role, Kind(k), err)
			}
			out.Kinds[k] = KindFigures{Seen: seen, Own: own, Delayed: cur.Delayed - prev.Delayed, Errors: cur.Errors - prev.Errors}
		}
		w.Mounts[role] = out
	}
	return w, nil
}

// subtract is a histogram of what a has and b does not: b must be an
// earlier state of a.
func subtract(a, b *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	sa, sb := a.Export(), b.Export()
	if sa.LowestTrackableValue != sb.LowestTrackableValue || sa.HighestTrackableValue != sb.HighestTrackableValue ||
		sa.SignificantFigures != sb.SignificantFigures || len(sa.Counts) != len(sb.Counts) {
		return nil, fmt.Errorf("histograms of different shapes")
	}
	for i := range sa.Counts {
		if sa.Counts[i] < sb.Counts[i] {
			return nil, fmt.Errorf("the later histogram has fewer values than the earlier: not the same layer")
		}
		sa.Counts[i] -= sb.Counts[i]
	}
	return hdrhistogram.Import(sa), nil
}

// KindSummary is one kind of operation over a window, in the units
// reports show.
type KindSummary struct {
	Count      int64   `json:"count"`
	Errors     int64   `json:"errors,omitempty"`
	MeanMillis float64 `json:"mean_ms"`
	P50Millis  float64 `json:"p50_ms"`
	P99Millis  float64 `json:"p99_ms"`
	P999Millis float64 `json:"p99_9_ms"`
	MaxMillis  float64 `json:"max_ms"`
	// DelayMeanMillis is the mean delay drawn: what the settings asked
	// for; the rest of MeanMillis is the pass-through's (OwnMeanMicros).
	DelayMeanMillis float64 `json:"delay_mean_ms"`
	OwnMeanMicros   float64 `json:"own_mean_us"`
	OwnP99Micros    float64 `json:"own_p99_us"`
}

// Summary is a window's figures: by directory role and kind, all
// directories together, and the layer's CPU.
type Summary struct {
	Seconds float64 `json:"seconds"`
	// ByDir: role ("data", "wal") → kind ("read", "write", "fsync",
	// "meta"); kinds without operations are left out.
	ByDir map[string]map[string]KindSummary `json:"by_dir"`
	// All are the kinds over every directory on the layer.
	All map[string]KindSummary `json:"all"`
	// CPUSeconds is the layer process's CPU time in the window;
	// CPUMicrosPerOp divides it by every operation the layer served
	// that was counted here (reads, writes, fsyncs, meta).
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
}

// Summary summarises the window.
func (w Window) Summary() Summary {
	s := Summary{Seconds: w.End.Sub(w.Start).Seconds(), ByDir: map[string]map[string]KindSummary{},
		All: map[string]KindSummary{}, CPUSeconds: w.CPUSeconds}
	var all [NumKinds]KindFigures
	var ops int64
	for _, role := range slices.Sorted(maps.Keys(w.Mounts)) {
		m := w.Mounts[role]
		by := map[string]KindSummary{}
		for k := range m.Kinds {
			f := m.Kinds[k]
			if f.Seen == nil || f.Seen.TotalCount() == 0 {
				continue
			}
			by[Kind(k).String()] = summarize(f)
			ops += f.Seen.TotalCount()
			if all[k].Seen == nil {
				all[k] = KindFigures{Seen: newHistogram(), Own: newHistogram()}
			}
			all[k].Seen.Merge(f.Seen)
			all[k].Own.Merge(f.Own)
			all[k].Delayed += f.Delayed
			all[k].Errors += f.Errors
		}
		s.ByDir[role] = by
	}
	for k := range all {
		if all[k].Seen != nil && all[k].Seen.TotalCount() > 0 {
			s.All[Kind(k).String()] = summarize(all[k])
		}
	}
	if ops > 0 {
		s.CPUMicrosPerOp = w.CPUSeconds * 1e6 / float64(ops)
	}
	return s
}

func summarize(f KindFigures) KindSummary {
	n := f.Seen.TotalCount()
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return KindSummary{
		Count: n, Errors: f.Errors,
		MeanMillis: f.Seen.Mean() / 1000, P50Millis: ms(f.Seen.ValueAtPercentile(50)),
		P99Millis: ms(f.Seen.ValueAtPercentile(99)), P999Millis: ms(f.Seen.ValueAtPercentile(99.9)),
		MaxMillis:       ms(f.Seen.Max()),
		DelayMeanMillis: millis(f.Delayed) / float64(n),
		OwnMeanMicros:   f.Own.Mean(), OwnP99Micros: float64(f.Own.ValueAtPercentile(99)),
	}
}
