package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histograms' buckets: 0.5 ms doubling up to 65.5 s, past the driver's
// 60 s ceiling.
var LatencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 18)

// phases are the values of the phase label, in driver.Phase order.
var phases = []driver.Phase{driver.PhaseRampup, driver.PhaseMeasure, driver.PhaseGrace, driver.PhaseDone}

// Metrics is one command's live figures and their registry. Its
// Transaction method is on the virtual users' hot path: the series it
// touches are created up front, so recording is a few atomic additions.
type Metrics struct {
	reg *prometheus.Registry

	done    [tpcc.NumTxKinds][driver.NumOutcomes]prometheus.Counter
	retries [tpcc.NumTxKinds]prometheus.Counter
	latency [tpcc.NumTxKinds]prometheus.Observer
	errors  *prometheus.CounterVec

	nopm, tpm prometheus.Gauge
	phase     *prometheus.GaugeVec
	vus       prometheus.Gauge
	runs      prometheus.Counter
	info      *prometheus.GaugeVec

	mu      sync.Mutex // guards infoSet
	infoSet []string
}

var _ driver.Recorder = (*Metrics)(nil)

// New returns the metrics of one command, in a registry of their own (not
// the client library's global one), with the standard process collector
// beside them.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	done := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: TransactionsTotal,
		Help: "Transactions ended, by TPC-C type and outcome (committed, rolled_back as the New-Order input asked, failed), ramp-up and grace included.",
	}, []string{"type", "outcome"})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: TransactionRetries,
		Help: "Retries of whole transactions after a serialization failure, deadlock or lock timeout, by type.",
	}, []string{"type"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    TransactionLatency,
		Help:    "Latency of completed transactions (committed or rolled back as asked), retries included, by type.",
		Buckets: LatencyBuckets,
	}, []string{"type"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: TransactionErrors,
		Help: "Failed transactions by type and error class (serialization, deadlock, lock_timeout, connection, ...).",
	}, []string{"type", "class"})
	m.nopm = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: NOPM,
		Help: "New-Orders committed per minute over the last live interval (the run so far while it is younger), updated every second, counted by the driver (the stored result's NOPM comes from the database).",
	})
	m.tpm = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: TPM,
		Help: "Transactions completed per minute over the last live interval (the run so far while it is younger), updated every second, counted by the driver.",
	})
	m.phase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: Phase,
		Help: "1 for the phase the running step is in (rampup, measure, grace, done), 0 for the others.",
	}, []string{"phase"})
	m.vus = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: VirtualUsers,
		Help: "Virtual users of the running step.",
	})
	m.runs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: RunsTotal,
		Help: "Timed runs started (one per step and repeat of a profile).",
	})
	m.info = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: ProfileInfo,
		Help: "1, labelled with the running profile's label and dialect.",
	}, []string{"label", "dialect"})
	cpu := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: DriverCPUSecondsTotal,
		Help: "CPU time (user plus system) of the oltplab process: the driver's own cost, and with embedded SQLite the database's work too.",
	}, driver.ProcessCPUSeconds)
	m.reg.MustRegister(done, retries, latency, m.errors, m.nopm, m.tpm, m.phase, m.vus, m.runs, m.info, cpu,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	for k := range tpcc.NumTxKinds {
		kind := tpcc.TxKind(k).String()
		for o := range driver.NumOutcomes {
			m.done[k][o] = done.WithLabelValues(kind, o.String())
		}
		m.retries[k] = retries.WithLabelValues(kind)
		m.latency[k] = latency.WithLabelValues(kind)
	}
	for _, p := range phases {
		m.phase.WithLabelValues(p.String()).Set(0)
	}
	m.phase.WithLabelValues(driver.PhaseDone.String()).Set(1)
	return m
}

// Registry is where the metrics are gathered from.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Transaction counts one ended transaction (driver.Recorder).
func (m *Metrics) Transaction(t driver.Transaction) {
	k := t.Kind
	if k < 0 || int(k) >= tpcc.NumTxKinds || t.Outcome < 0 || t.Outcome >= driver.NumOutcomes {
		return
	}
	m.done[k][t.Outcome].Inc()
	if t.Retries > 0 {
		m.retries[k].Add(float64(t.Retries))
	}
	if t.Outcome == driver.OutcomeFailed {
		// Failures are rare: their series are made as they happen.
		m.errors.WithLabelValues(k.String(), t.Class.String()).Inc()
		return
	}
	m.latency[k].Observe(t.Latency.Seconds())
}

// Phase records the running step's phase and virtual users
// (driver.Recorder).
func (m *Metrics) Phase(p driver.Phase, vus int) {
	if p == driver.PhaseRampup {
		m.runs.Inc()
		m.nopm.Set(0)
		m.tpm.Set(0)
	}
	for _, q := range phases {
		v := 0.0
		if q == p {
			v = 1
		}
		m.phase.WithLabelValues(q.String()).Set(v)
	}
	m.vus.Set(float64(vus))
	if p == driver.PhaseDone {
		m.vus.Set(0)
	}
}

// Live records the driver's rates over the last live interval.
func (m *Metrics) Live(l driver.Live) {
	m.nopm.Set(l.NOPM)
	m.tpm.Set(l.TPM)
}

// Profile labels what runs next: the profile's label (user text, escaped
// by the exposition format) and the target's dialect. The previous
// profile's series is removed.
func (m *Metrics) Profile(label, dialectName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.infoSet != nil {
		m.info.DeleteLabelValues(m.infoSet...)
	}
	m.infoSet = []string{label, dialectName}
	m.info.WithLabelValues(m.infoSet...).Set(1)
}
