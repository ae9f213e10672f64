package summary

// LatencyLayer is what a managed instance's latency layer
// (internal/latency) measured over a result's window: the delays it was
// set to and, per kind of operation, the latency the server saw through
// it (the delay included), with the layer's own part and CPU cost. It is
// the stored form of latency.Settings and latency.Summary (scenario
// converts them; a test holds both to marshal alike).
type LatencyLayer struct {
	Settings LayerSettings `json:"settings"`
	LayerWindow
}

// LayerSettings are a layer's delays as they are recorded: the text form
// ("read=4ms,fsync=6ms"; "0" for zero delays), each kind's delay with its
// mean, the jitter, and the directory it covers ("" both, "data", "wal").
type LayerSettings struct {
	Text   string                `json:"text"`
	Delays map[string]LayerDelay `json:"delays,omitempty"`
	Jitter string                `json:"jitter,omitempty"`
	On     string                `json:"on,omitempty"`
}

// LayerDelay is one kind's configured delay and its mean.
type LayerDelay struct {
	Delay      string  `json:"delay"`
	MeanMillis float64 `json:"mean_ms"`
}

// LayerWindow is the layer's figures over a window.
type LayerWindow struct {
	Seconds float64 `json:"seconds"`
	// ByDir: directory role ("data", "wal") → kind ("read", "write",
	// "fsync", "meta"); kinds without operations are left out.
	ByDir map[string]map[string]LayerKind `json:"by_dir"`
	// All are the kinds over every directory on the layer.
	All map[string]LayerKind `json:"all"`
	// CPUSeconds is the layer process's CPU time in the window;
	// CPUMicrosPerOp divides it by the operations it served.
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
}

// LayerKind is one kind of operation over a window: the latency the
// server saw (from the moment the layer took the request to its answer),
// the mean delay drawn, and the layer's own part beyond it (the
// pass-through and the device below).
type LayerKind struct {
	Count           int64   `json:"count"`
	Errors          int64   `json:"errors,omitempty"`
	MeanMillis      float64 `json:"mean_ms"`
	P50Millis       float64 `json:"p50_ms"`
	P99Millis       float64 `json:"p99_ms"`
	P999Millis      float64 `json:"p99_9_ms"`
	MaxMillis       float64 `json:"max_ms"`
	DelayMeanMillis float64 `json:"delay_mean_ms"`
	OwnMeanMicros   float64 `json:"own_mean_us"`
	OwnP99Micros    float64 `json:"own_p99_us"`
}

// Kind is the figures of one kind over every directory, and whether any
// operation of it was seen.
func (l *LatencyLayer) Kind(k string) (LayerKind, bool) {
	if l == nil {
		return LayerKind{}, false
	}
	f, ok := l.All[k]
	return f, ok && f.Count > 0
}
