package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/summary"
)

// LatencyLayer is a managed instance's latency layer as a measurement
// reads it (Env.Layer; *latency.Layer): its settings, and snapshots of
// its histograms whose difference is a window's figures.
type LatencyLayer interface {
	Settings() latency.Settings
	Snapshot(ctx context.Context) (latency.Snapshot, error)
}

// snapshotTimeout bounds one snapshot of the layer (a message to its
// process and back).
const snapshotTimeout = 5 * time.Second

// layerWindow reads the layer at a window's start and end and turns the
// two into the window's stored figures (summary.LatencyLayer). A timed
// run's window is the driver's measured one: its Phase calls take the
// snapshots (layerWindow is the run's driver.Recorder, passing every
// call on to the observer's); other measurements call begin and end.
type layerWindow struct {
	layer LatencyLayer
	next  driver.Recorder
	ctx   context.Context

	wg         sync.WaitGroup
	mu         sync.Mutex
	start, end *latency.Snapshot
	errs       []error
}

// watchLayer returns the window of the env's layer, nil without one.
func (e *Env) watchLayer(ctx context.Context, next driver.Recorder) *layerWindow {
	if e.Layer == nil {
		return nil
	}
	return &layerWindow{layer: e.Layer, next: next, ctx: context.WithoutCancel(ctx)}
}

// take snapshots the layer into *into, on a goroutine of its own: the
// driver's schedule does not wait for it (the snapshot's own time is
// what the window's seconds are measured from).
func (w *layerWindow) take(into **latency.Snapshot) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, snapshotTimeout)
		defer cancel()
		s, err := w.layer.Snapshot(ctx)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.errs = append(w.errs, err)
			return
		}
		*into = &s
	}()
}

// begin and end mark the window of a measurement that is not a timed run.
func (w *layerWindow) begin() {
	if w != nil {
		w.take(&w.start)
	}
}

func (w *layerWindow) stop() {
	if w != nil {
		w.take(&w.end)
	}
}

// Phase takes the snapshots as the measured window starts (PhaseMeasure)
// and as it ends (PhaseGrace: no transaction starts any more).
func (w *layerWindow) Phase(p driver.Phase, vus int) {
	switch p {
	case driver.PhaseMeasure:
		w.take(&w.start)
	case driver.PhaseGrace:
		w.take(&w.end)
	}
	if w.next != nil {
		w.next.Phase(p, vus)
	}
}

// Transaction passes the transaction on to the observer's recorder.
func (w *layerWindow) Transaction(t driver.Transaction) {
	if w.next != nil {
		w.next.Transaction(t)
	}
}

// figures waits for the snapshots and returns the window's figures, or
// nil with a warning when the layer could not be read (nil, "" when no
// window was measured).
func (w *layerWindow) figures() (*summary.LatencyLayer, string) {
	if w == nil {
		return nil, ""
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) > 0 {
		return nil, fmt.Sprintf("latency layer: figures unavailable: %v", w.errs[0])
	}
	if w.start == nil || w.end == nil {
		return nil, ""
	}
	win, err := w.end.Since(*w.start)
	if err != nil {
		return nil, fmt.Sprintf("latency layer: figures unavailable: %v", err)
	}
	out, err := storedLayer(w.layer.Settings(), win.Summary())
	if err != nil {
		return nil, fmt.Sprintf("latency layer: figures unavailable: %v", err)
	}
	return out, ""
}

// record puts the window's figures into m (or a warning saying why not).
func (w *layerWindow) record(m *summary.Monitor) {
	if m == nil {
		return
	}
	f, warn := w.figures()
	m.LatencyLayer = f
	if warn != "" {
		m.Warnings = append(m.Warnings, warn)
	}
}

// storedLayer converts the layer's settings and a window's summary to
// their stored form, which marshals as they do.
func storedLayer(s latency.Settings, sum latency.Summary) (*summary.LatencyLayer, error) {
	var out summary.LatencyLayer
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out.Settings); err != nil {
		return nil, err
	}
	if b, err = json.Marshal(sum); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out.LayerWindow); err != nil {
		return nil, err
	}
	return &out, nil
}
