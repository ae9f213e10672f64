package driver

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// ShardTolerance is how far a shard's measured window may start or end
// from shard 0's for the shards' results to be merged as one window: one
// second or 1% of the window, whichever is longer. Every shard reads its
// counters at each edge and its clock may be off by its NTP error; a
// larger offset means the shards measured different intervals.
func ShardTolerance(window time.Duration) time.Duration {
	return max(time.Second, window/100)
}

// ShardPart is one shard's stored result of one step of a sharded run,
// what MergeShards adds up.
type ShardPart struct {
	Index int
	RunID int64
	// Result is nil when the shard stored none (its process died, or it
	// never ran the step); Why then says so.
	Result *Result
	Why    string
	// Histograms are the shard's latency histograms (microseconds), as
	// the results store keeps them.
	Histograms map[tpcc.TxKind]*hdrhistogram.Histogram
}

// ShardMerge describes how a merged result was made from its shards.
type ShardMerge struct {
	Group string `json:"group"`
	Count int    `json:"count"`
	// Merged are the shards whose results were added; Missing the others,
	// with why. A result with a missing shard is Partial.
	Merged  []int          `json:"merged"`
	Missing []ShardMissing `json:"missing,omitempty"`
	// ToleranceSeconds is ShardTolerance of the window; WithinTolerance
	// whether every merged shard's window started and ended that close to
	// shard 0's (the reference). A merge outside it is marked suspect.
	ToleranceSeconds float64 `json:"tolerance_seconds"`
	WithinTolerance  bool    `json:"within_tolerance"`
	// Reference is the shard whose window (and database-wide counters)
	// the merged result uses: 0, unless shard 0 is missing.
	Reference int           `json:"reference"`
	Shards    []ShardFigure `json:"shards"`
	// ShardNewOrders is the sum of the shards' own New-Order counts (each
	// over its warehouses, over its own window); NewOrdersSource says
	// where the merged NOPM comes from; NewOrdersNote compares them.
	ShardNewOrders  int64  `json:"shard_new_orders"`
	NewOrdersSource string `json:"new_orders_source"`
	NewOrdersNote   string `json:"new_orders_note,omitempty"`
}

// ShardMissing is a shard without a result, and why.
type ShardMissing struct {
	Index int    `json:"index"`
	RunID int64  `json:"run_id,omitempty"`
	Why   string `json:"why"`
}

// ShardFigure is one shard's part of a merged result.
type ShardFigure struct {
	Index int   `json:"index"`
	RunID int64 `json:"run_id"`
	VUs   int   `json:"vus"`
	// Offsets of the shard's window's edges from the reference's (its
	// clock's instants: they include the hosts' clock difference).
	StartOffsetSeconds float64 `json:"start_offset_seconds"`
	EndOffsetSeconds   float64 `json:"end_offset_seconds"`
	DBNewOrders        int64   `json:"db_new_orders"`
	NOPM               float64 `json:"nopm"`
	DriverTPM          float64 `json:"driver_tpm"`
	Partial            bool    `json:"partial,omitempty"`
}

// shardNewOrdersAgreePct is how far, in percent, the sum of the shards'
// own New-Order counts may differ from the database-wide one without a
// note: the shards read their counters at slightly different instants.
const shardNewOrdersAgreePct = 5.0

// ErrNoShard: none of a sharded run's shards stored a result to merge.
var ErrNoShard = errors.New("no shard stored a result")

// MergeShards merges the results of one step of a sharded run (count
// shards of group) into the result one driver would have measured. The
// merge is exact where the stored data allows it: latency histograms are
// added (not their percentiles averaged), transaction counts, errors,
// audit counts and the per-second counts are summed; NOPM and TPM come
// from the database-wide counters shard 0 read once over the shared window
// (GroupCounters), not from the shards' figures, which are recorded beside
// them. Each shard's window is checked against the reference's (shard 0's)
// within ShardTolerance; offsets are recorded. A missing shard makes the
// result Partial and is named; windows that do not coincide make it
// Suspect. Per-second percentiles and service times are not stored as
// histograms: the merged series carries the highest shard's per-second
// percentiles and no service time (said in Warnings).
func MergeShards(group string, count int, parts []ShardPart) (*Result, error) {
	sort.Slice(parts, func(i, j int) bool { return parts[i].Index < parts[j].Index })
	m := &ShardMerge{Group: group, Count: count, Reference: -1, WithinTolerance: true}
	var present []ShardPart
	seen := map[int]bool{}
	for _, p := range parts {
		seen[p.Index] = true
		if p.Result == nil {
			m.Missing = append(m.Missing, ShardMissing{Index: p.Index, RunID: p.RunID, Why: p.Why})
			continue
		}
		present = append(present, p)
		m.Merged = append(m.Merged, p.Index)
	}
	for i := range count {
		if !seen[i] {
			m.Missing = append(m.Missing, ShardMissing{Index: i, Why: "stored no run for this step"})
		}
	}
	sort.Slice(m.Missing, func(i, j int) bool { return m.Missing[i].Index < m.Missing[j].Index })
	if len(present) == 0 {
		return nil, fmt.Errorf("merge shard group %q: %w", group, ErrNoShard)
	}
	ref := present[0].Result
	m.Reference = present[0].Index

	out := &Result{
		Options: ref.Options, Dialect: ref.Dialect, Warehouses: ref.Warehouses, Window: ref.Window,
		RunConstants: ref.RunConstants, EmbeddedDatabase: ref.EmbeddedDatabase, Shards: m,
	}
	out.Options.Shard = Shard{}
	out.Options.VUs = 0
	tol := ShardTolerance(time.Duration(ref.Window.Seconds * float64(time.Second)))
	m.ToleranceSeconds = tol.Seconds()

	var hists [tpcc.NumTxKinds]*hdrhistogram.Histogram
	kinds := make([]KindResult, tpcc.NumTxKinds)
	for k := range kinds {
		kinds[k] = KindResult{Kind: tpcc.TxKind(k).String(), Failed: map[string]int64{}}
	}
	out.Audit = tpcc.NewAudit(ref.Warehouses)
	out.ErrorsByClass = map[string]int64{}
	// A stall of the merged run is a stretch in which no shard completed
	// anything: the overlap of every shard's own stalls.
	var shardStalls [][]span
	for _, p := range present {
		r := p.Result
		out.Options.VUs += r.Options.VUs
		f := ShardFigure{Index: p.Index, RunID: p.RunID, VUs: r.Options.VUs,
			StartOffsetSeconds: r.Window.Start.Sub(ref.Window.Start).Seconds(),
			EndOffsetSeconds:   r.Window.End.Sub(ref.Window.End).Seconds(),
			DBNewOrders:        r.DBNewOrders, NOPM: r.NOPM, DriverTPM: r.DriverTPM, Partial: r.Partial}
		m.Shards = append(m.Shards, f)
		m.ShardNewOrders += r.DBNewOrders
		if math.Abs(f.StartOffsetSeconds) > tol.Seconds() || math.Abs(f.EndOffsetSeconds) > tol.Seconds() {
			m.WithinTolerance = false
		}
		for k := range tpcc.NumTxKinds {
			if k >= len(r.Kinds) {
				break
			}
			kr := r.Kinds[k]
			kinds[k].Completed += kr.Completed
			kinds[k].RolledBack += kr.RolledBack
			kinds[k].Retried += kr.Retried
			for c, n := range kr.Failed {
				kinds[k].Failed[c] += n
			}
			h := p.Histograms[tpcc.TxKind(k)]
			if h == nil {
				if kr.Completed > 0 {
					return nil, fmt.Errorf("merge shard group %q: shard %d stored %d %s but no latency histogram", group, p.Index, kr.Completed, kr.Kind)
				}
				continue
			}
			if hists[k] == nil {
				hists[k] = newLatencyHistogram()
			}
			if dropped := hists[k].Merge(h); dropped > 0 {
				return nil, fmt.Errorf("merge shard group %q: shard %d's %s histogram has %d values outside the range", group, p.Index, kr.Kind, dropped)
			}
		}
		out.Audit.Merge(r.Audit)
		for c, n := range r.ErrorsByClass {
			out.ErrorsByClass[c] += n
		}
		out.DriverCPUSeconds += r.DriverCPUSeconds
		out.DriverCPUCores += r.DriverCPUCores
		out.SchedLagMaxMillis = max(out.SchedLagMaxMillis, r.SchedLagMaxMillis)
		out.DriverProcs = max(out.DriverProcs, r.DriverProcs)
		out.SchedLagMeanMillis = max(out.SchedLagMeanMillis, r.SchedLagMeanMillis)
		out.CounterReadSeconds = max(out.CounterReadSeconds, r.CounterReadSeconds)
		out.Outages = append(out.Outages, r.Outages...)
		shardStalls = append(shardStalls, stallSpans(r.Stalls))
		out.ServerRestarted = out.ServerRestarted || r.ServerRestarted
		out.Partial = out.Partial || r.Partial
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("shard %d: %s", p.Index, w))
		}
		for _, c := range r.Contaminated {
			out.Contaminated = append(out.Contaminated, fmt.Sprintf("shard %d: %s", p.Index, c))
		}
		out.Series = addSeries(out.Series, r.Series)
	}
	out.Stalls = stalls(shardStalls)
	var completed, newOrders int64
	for k := range kinds {
		if hists[k] != nil {
			kinds[k].LatencyMicros = summarise(hists[k])
		}
		completed += kinds[k].Completed
		if tpcc.TxKind(k) == tpcc.NewOrderTx {
			newOrders = kinds[k].Completed - kinds[k].RolledBack
		}
	}
	out.hists, out.Kinds = hists, kinds
	out.AuditFigures = out.Audit.Figures()
	out.MixPct = map[string]float64{}
	for _, kr := range kinds {
		if completed > 0 {
			out.MixPct[kr.Kind] = 100 * float64(kr.Completed) / float64(completed)
		}
	}
	minutes := out.Window.Seconds / 60
	if minutes > 0 {
		out.DriverTPM = float64(completed) / minutes
		out.DriverNOPM = float64(newOrders) / minutes
	}

	// NOPM and TPM: the database's, over all warehouses, read once.
	g := ref.Group
	switch {
	case g != nil && m.Reference == 0:
		out.DBNewOrders = g.DBNewOrders
		out.NOPMSource = NOPMSource + " over all warehouses, read once by shard 0 for the shared window"
		if g.TxCountSource != "" {
			out.DBTransactions = g.DBTransactions
			out.TPMSource = g.TxCountSource + " (read once by shard 0)"
		} else {
			out.DBTransactions = completed
			out.TPMSource = DriverTPMSource + ", summed over the shards"
		}
		if minutes > 0 {
			out.NOPM = float64(out.DBNewOrders) / minutes
			out.TPM = float64(out.DBTransactions) / minutes
		}
		if g.DBNewOrders > 0 {
			if d := 100 * math.Abs(float64(m.ShardNewOrders-g.DBNewOrders)) / float64(g.DBNewOrders); d > shardNewOrdersAgreePct {
				m.NewOrdersNote = fmt.Sprintf("the shards' own New-Order counts add up to %d, %.1f%% off the database-wide %d "+
					"(more than %g%%: their windows or warehouses did not line up)", m.ShardNewOrders, d, g.DBNewOrders, shardNewOrdersAgreePct)
				out.Warnings = append(out.Warnings, m.NewOrdersNote)
			} else {
				m.NewOrdersNote = fmt.Sprintf("the shards' own New-Order counts add up to %d (database-wide: %d)", m.ShardNewOrders, g.DBNewOrders)
			}
		}
	default:
		// Shard 0's reading is missing: the shards' own figures, labelled.
		out.DBNewOrders, out.DBTransactions = m.ShardNewOrders, completed
		out.NOPMSource = "sum of the shards' own NOPM (shard 0's database-wide reading is missing)"
		out.TPMSource = DriverTPMSource + ", summed over the shards"
		if minutes > 0 {
			out.NOPM = float64(out.DBNewOrders) / minutes
			out.TPM = float64(out.DBTransactions) / minutes
		}
	}
	m.NewOrdersSource = out.NOPMSource
	if n := out.DBTransactions; n > 0 {
		out.DriverCPUMicrosPerTx = out.DriverCPUSeconds * 1e6 / float64(n)
	}
	out.countersRead = g != nil

	if len(m.Missing) > 0 {
		out.Partial = true
		for _, ms := range m.Missing {
			out.Warnings = append(out.Warnings, fmt.Sprintf("shard %d/%d is missing from the merge: %s", ms.Index, count, ms.Why))
		}
	}
	if !m.WithinTolerance {
		out.Suspect = append(out.Suspect, fmt.Sprintf("the shards' windows do not coincide within %.1f s of shard %d's (offsets in shards)",
			m.ToleranceSeconds, m.Reference))
	}
	out.Warnings = append(out.Warnings, fmt.Sprintf("merged from %d of %d shards: latency histograms added; per-second percentiles are "+
		"the highest shard's and service times are not merged (neither is stored as a histogram)", len(present), count))
	out.judgeFailures()
	// The merged window's own outages and stalls judge its server; a
	// shard's other reasons (its managed server exited) stay its own.
	out.judgeServer()
	return out, nil
}

// addSeries adds b's per-second counts to a's, second by second (the
// windows coincide: sample i of each covers the same second).
func addSeries(a, b []SecondSample) []SecondSample {
	for i, s := range b {
		if i >= len(a) {
			a = append(a, s)
			continue
		}
		t := &a[i]
		t.Transactions += s.Transactions
		t.NewOrders += s.NewOrders
		t.Errors += s.Errors
		t.P50Micros = max(t.P50Micros, s.P50Micros)
		t.P99Micros = max(t.P99Micros, s.P99Micros)
		t.rates()
	}
	return a
}
