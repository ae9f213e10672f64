package driver

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// NOPMSource labels how NOPM is measured, as HammerDB defines it.
const NOPMSource = "delta of SUM(d_next_o_id) FROM district"

// DriverTPMSource labels TPM taken from the driver's own counts, for
// dialects without a server transaction counter.
const DriverTPMSource = "driver commits (no server counter)"

// DriverFallbackSource begins the label of a figure taken from the
// driver's own counts because the database's could not describe the
// window (Result.CountsFallback says why).
const DriverFallbackSource = "the driver's own count"

// Result is a run's measurements. Every count, rate, percentile and audit
// figure covers only the transactions that ended inside the measured
// window. It is stored as JSON, inside the CLI's run summary: fields are
// only ever added, and a change old readers would misread takes a new
// summary version (internal/cli/summary.go).
type Result struct {
	Options      Options        `json:"options"`
	Dialect      string         `json:"dialect"`
	Warehouses   int            `json:"warehouses"`
	Window       Window         `json:"window"`
	RunConstants tpcc.Constants `json:"run_constants"`

	// TPM is database transactions (commits plus rollbacks) per minute
	// from TPMSource; NOPM is New-Orders per minute from NOPMSource.
	TPM        float64 `json:"tpm"`
	NOPM       float64 `json:"nopm"`
	TPMSource  string  `json:"tpm_source"`
	NOPMSource string  `json:"nopm_source"`
	// DBTransactions and DBNewOrders are the deltas behind TPM and NOPM
	// (0 when the database's counters could not be used: CountsFallback).
	DBTransactions int64 `json:"db_transactions"`
	DBNewOrders    int64 `json:"db_new_orders"`
	// OwnStatements is what oltplab itself ran on the database inside the
	// window (its samplers' queries) that the server's counter counts as
	// transactions (dialect.StatementsCounted): TPM leaves them out,
	// (DBTransactions - OwnStatements) per minute. At a low rate (the
	// tpc-c mode's keying and thinking terminals) they would otherwise
	// be most of the counter. 0 where the counter does not count them.
	OwnStatements int64 `json:"own_statements,omitempty"`
	// CountsFallback says why TPM and NOPM are the driver's own counts
	// rather than the database's (its counters could not be read at the
	// end of the window; the server restarted inside it); empty when they
	// are the database's. It is a labelled measurement, not a suspect one.
	CountsFallback string `json:"counts_fallback,omitempty"`
	// ServerRestarted: the server's start time changed inside the window.
	ServerRestarted bool `json:"server_restarted,omitempty"`
	// Outages are the stretches of the run (ramp-up, window and grace)
	// during which virtual users had lost their connection.
	Outages []Outage `json:"outages,omitempty"`
	// Stalls are the stretches of the measured window, of at least
	// StallThreshold, in which no transaction completed (unpaced runs).
	Stalls []Stall `json:"stalls,omitempty"`
	// ServerFailure says why the run's figures are not the server's: its
	// server was down when the measured window ended (an outage still
	// open), stood still for more than Options.MaxStallPct of the window
	// (stalls), or exited (a managed instance: the caller says so,
	// FailServer). Such a run is stored with status failed, with what it
	// measured, and left out of peaks, ratios and cost. Empty otherwise.
	ServerFailure []string `json:"server_failure,omitempty"`
	// Contaminated says, when the caller found that something else used
	// the machine's CPU during the window beyond its limits (foreign CPU,
	// steal: scenario's CPU account), what it found; such a run is stored
	// with status contaminated and left out of peaks and verdicts unless
	// asked for. Empty otherwise.
	Contaminated []string `json:"contaminated,omitempty"`
	// TooManyFailures says, when more of the window's transactions failed
	// than Options.MaxFailurePct allows, how many did: such a run is not a
	// success. Empty otherwise.
	TooManyFailures string `json:"too_many_failures,omitempty"`

	// DriverTPM and DriverNOPM are the same rates from the driver's own
	// counts: completed transactions (committed or rolled back as asked)
	// and committed New-Orders.
	DriverTPM  float64 `json:"driver_tpm"`
	DriverNOPM float64 `json:"driver_nopm"`

	Kinds []KindResult `json:"kinds"`
	// MixPct is the realised mix: each kind's share of completed
	// transactions, in percent.
	MixPct map[string]float64 `json:"mix_pct"`
	// Audit holds the raw counts (mergeable across shards); AuditFigures
	// the clause 9.2 and 5.2.3 figures computed from them.
	Audit        tpcc.Audit    `json:"audit_counts"`
	AuditFigures []tpcc.Figure `json:"audit_figures"`
	// ErrorsByClass counts failed transactions by error class, all kinds.
	ErrorsByClass map[string]int64 `json:"errors_by_class"`

	// DriverCPUSeconds is this process's CPU time (user+system) over the
	// window; DriverCPUMicrosPerTx divides it by DBTransactions. With an
	// embedded database it includes the database's own work.
	DriverCPUSeconds     float64 `json:"driver_cpu_seconds"`
	DriverCPUMicrosPerTx float64 `json:"driver_cpu_micros_per_tx"`
	// DriverProcs is the most Go processors (GOMAXPROCS) the driver had in
	// the window: they follow its load (procs.go) unless GOMAXPROCS is set
	// in the environment.
	DriverProcs int `json:"driver_procs,omitempty"`
	// EmbeddedDatabase: the database ran inside this process
	// (dialect.Capabilities.Embedded), so the driver's CPU includes its work.
	EmbeddedDatabase bool `json:"embedded_database,omitempty"`
	// SchedLagMaxMillis and SchedLagMeanMillis: how late a 100 ms ticker
	// fired during the window.
	SchedLagMaxMillis  float64 `json:"sched_lag_max_millis"`
	SchedLagMeanMillis float64 `json:"sched_lag_mean_millis"`
	// DriverCPUCores is DriverCPUSeconds over the window: the share of one
	// core the driver used.
	DriverCPUCores float64 `json:"driver_cpu_cores"`

	// Pacing: a paced run's schedule and how late transactions started
	// against it (a rate, or the tpc-c terminals); nil when unpaced.
	Pacing *Pacing `json:"pacing,omitempty"`
	// Deferred: the deferred Deliveries of the tpc-c mode.
	Deferred *DeferredDelivery `json:"deferred_delivery,omitempty"`
	// Spec: the tpc-c mode's checks (response-time constraints, terminals,
	// mix) and its New-Order rate against the maximum; tpmC only when
	// every check passed.
	Spec *Spec `json:"spec,omitempty"`

	// Partial: the run was interrupted (or failed) before the measured
	// window ended; everything measured so far is kept.
	Partial bool `json:"partial"`

	// CounterReadSeconds is how long the counter reads at the window's
	// two edges took (virtual users kept working meanwhile);
	// TxCountLagSeconds how late the server may publish a transaction in
	// its counter (dialect.Capabilities.TxCountLag). Both bound the
	// cross-check's allowance.
	CounterReadSeconds float64 `json:"counter_read_seconds"`
	TxCountLagSeconds  float64 `json:"tx_count_lag_seconds"`
	// Check is the cross-check of the database's figures against the
	// driver's own counts (CheckCounters); nil until it ran.
	Check *CrossCheck `json:"cross_check,omitempty"`
	// Suspect holds why the database's figures cannot be trusted for this
	// run (a negative figure, a counter that went backwards, a divergence
	// from the driver's own counts beyond the tolerance); empty when they
	// agree.
	Suspect []string `json:"suspect,omitempty"`
	// Warnings are caveats a reader of the figures should know (e.g. a
	// window too short for the server counter's publication lag).
	Warnings []string `json:"warnings,omitempty"`

	// Series is one sample per second of the measured window.
	Series []SecondSample `json:"series"`

	// Group: shard 0's reading of the database's counters over every
	// warehouse (sharded runs only; see GroupCounters).
	Group *GroupCounters `json:"shard_group_counters,omitempty"`
	// Shards: this result is the merge of a sharded run's shards
	// (MergeShards); nil for one driver's own result.
	Shards *ShardMerge `json:"shards,omitempty"`

	hists              [tpcc.NumTxKinds]*hdrhistogram.Histogram
	deferredCompletion *hdrhistogram.Histogram
	// countersRead: both edges' counters were read, so the database's
	// figures exist and can be cross-checked.
	countersRead bool
	// txCountSource names the server counter behind DBTransactions; empty
	// without one. TPMSource says so too, unless TPM had to be replaced.
	txCountSource string
	// txCountsOwn: that counter counts oltplab's own statements
	// (dialect.Capabilities.TxCountsStatements).
	txCountsOwn dialect.StatementCounting
}

// Window is the measured window: from the moment the start counters were
// read to the moment the driver stopped measuring.
type Window struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
}

// KindResult is one transaction kind's measurements.
type KindResult struct {
	Kind string `json:"kind"`
	// Completed counts committed transactions plus, for New-Order, the
	// rollbacks the specification asks for (included in RolledBack).
	Completed  int64 `json:"completed"`
	RolledBack int64 `json:"rolled_back"`
	// Retried counts retries (not transactions) after retryable failures.
	Retried int64 `json:"retried"`
	// Failed counts transactions that ended in an error, by class.
	Failed map[string]int64 `json:"failed"`
	// LatencyMicros is the response time, from the transaction's intended
	// start (paced modes: its schedule, so a stall of the server or the
	// driver is not hidden) to its end; unpaced, the intended start is
	// the actual one.
	LatencyMicros Latency `json:"latency_micros"`
	// ServiceMicros is from the moment the session was asked to the end
	// (2 significant digits).
	ServiceMicros Latency `json:"service_micros"`
}

// Latency summarises a histogram, in microseconds.
type Latency struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P95  int64   `json:"p95"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

func summarise(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:  h.ValueAtQuantile(50),
		P90:  h.ValueAtQuantile(90),
		P95:  h.ValueAtQuantile(95),
		P99:  h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9),
		Max:  h.Max(),
		Mean: h.Mean(),
	}
}

// SecondSample is one second of the measured window (the last one may be
// shorter). Rates are scaled to per minute over IntervalSeconds.
type SecondSample struct {
	// T is the end of the sample, since the window's start.
	T               time.Duration `json:"t_ns"`
	IntervalSeconds float64       `json:"interval_seconds"`
	Transactions    int64         `json:"transactions"`
	NewOrders       int64         `json:"new_orders"`
	TPM             float64       `json:"tpm"`
	NOPM            float64       `json:"nopm"`
	Errors          int64         `json:"errors"`
	P50Micros       int64         `json:"p50_micros"`
	P99Micros       int64         `json:"p99_micros"`
}

// Histograms returns the merged latency histogram of each kind (in
// microseconds) for the results store, which keeps them so that runs and
// shards merge exactly. The caller must not modify them.
func (r *Result) Histograms() map[tpcc.TxKind]*hdrhistogram.Histogram {
	m := make(map[tpcc.TxKind]*hdrhistogram.Histogram, tpcc.NumTxKinds)
	for k, h := range r.hists {
		if h != nil {
			m[tpcc.TxKind(k)] = h
		}
	}
	return m
}

// merge fills the per-kind figures, the audit, the mix and the driver's
// own rates from the virtual users' statistics.
func (r *Result) merge(stats []*vuStats, warehouses int) {
	r.Audit = tpcc.NewAudit(warehouses)
	var errs [dialect.NumErrClasses]int64
	var completed, newOrders int64
	r.Kinds = make([]KindResult, tpcc.NumTxKinds)
	for k := range tpcc.NumTxKinds {
		h, svc := newLatencyHistogram(), newSecondHistogram()
		kr := KindResult{Kind: tpcc.TxKind(k).String(), Failed: map[string]int64{}}
		for _, s := range stats {
			ks := &s.kinds[k]
			kr.Completed += ks.completed
			kr.RolledBack += ks.rolledBack
			kr.Retried += ks.retried
			for c, n := range ks.failed {
				if n > 0 {
					kr.Failed[dialect.ErrClass(c).String()] += n
					errs[c] += n
				}
			}
			h.Merge(ks.latency)
			svc.Merge(ks.service)
		}
		kr.LatencyMicros = summarise(h)
		kr.ServiceMicros = summarise(svc)
		r.hists[k] = h
		r.Kinds[k] = kr
		completed += kr.Completed
		if tpcc.TxKind(k) == tpcc.NewOrderTx {
			newOrders = kr.Completed - kr.RolledBack
		}
	}
	for _, s := range stats {
		r.Audit.Merge(s.audit)
	}
	r.AuditFigures = r.Audit.Figures()
	r.MixPct = map[string]float64{}
	for _, kr := range r.Kinds {
		if completed > 0 {
			r.MixPct[kr.Kind] = 100 * float64(kr.Completed) / float64(completed)
		}
	}
	r.ErrorsByClass = map[string]int64{}
	for c, n := range errs {
		if n > 0 {
			r.ErrorsByClass[dialect.ErrClass(c).String()] = n
		}
	}
	r.DriverTPM = perMinute(completed, r.Window.Seconds)
	r.DriverNOPM = perMinute(newOrders, r.Window.Seconds)
}

// perMinute is n events over a window of seconds, per minute; 0 for an
// empty window.
func perMinute(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / (seconds / 60)
}

// committedNewOrders is the New-Orders that committed (completed, less
// the rollbacks the specification asks for).
func (r *Result) committedNewOrders() int64 {
	for _, k := range r.Kinds {
		if k.Kind == tpcc.NewOrderTx.String() {
			return k.Completed - k.RolledBack
		}
	}
	return 0
}

// completed is the number of completed transactions of every kind.
func (r *Result) completed() int64 {
	var n int64
	for _, k := range r.Kinds {
		n += k.Completed
	}
	return n
}

// DriverTransactions is the number of transactions the driver completed
// in the window (committed, or rolled back as the workload asked).
func (r *Result) DriverTransactions() int64 { return r.completed() }

// failed is the number of transactions of every kind that failed.
func (r *Result) failed() int64 {
	var n int64
	for _, k := range r.Kinds {
		for _, f := range k.Failed {
			n += f
		}
	}
	return n
}

// FailurePct is the share of the window's transactions that failed, in
// percent of those that ended (completed or failed); 0 when none ended.
func (r *Result) FailurePct() float64 {
	failed, done := r.failed(), r.completed()
	if failed+done == 0 {
		return 0
	}
	return 100 * float64(failed) / float64(failed+done)
}

// judgeFailures sets TooManyFailures when the failure rate passes
// Options.MaxFailurePct.
func (r *Result) judgeFailures() {
	if pct := r.FailurePct(); pct > r.Options.MaxFailurePct {
		r.TooManyFailures = fmt.Sprintf("%d of %d transactions failed (%.1f%%), more than the %g%% allowed (--max-failure-rate): "+
			"the database does not hold what its metadata says, or the server misbehaved",
			r.failed(), r.failed()+r.completed(), pct, r.Options.MaxFailurePct)
	}
}

// neverNegative replaces a negative TPM or NOPM (a counter that went
// backwards without a restart oltplab could see: a statistics reset, a
// restore) by the driver's own count, labelled. The negative deltas stay
// in DBTransactions and DBNewOrders, for the cross-check to report.
func (r *Result) neverNegative() {
	const why = " (the database's counter went backwards)"
	if r.NOPM < 0 {
		r.NOPM = r.DriverNOPM
		r.NOPMSource = DriverFallbackSource + why
	}
	if r.TPM < 0 {
		r.TPM = r.DriverTPM
		r.TPMSource = DriverFallbackSource + why
	}
}

// useDriverCounts makes TPM and NOPM the driver's own counts, labelled
// with CountsFallback.
func (r *Result) useDriverCounts() {
	label := DriverFallbackSource + " (" + r.CountsFallback + ")"
	r.TPM, r.NOPM = r.DriverTPM, r.DriverNOPM
	r.TPMSource, r.NOPMSource = label, label
	r.DBTransactions, r.DBNewOrders = 0, 0
}
