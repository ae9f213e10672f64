package driver

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Wire is a Result as it crosses the network, from a driver that ran on
// another host (an oltplab agent's) to the runner that stores it: the
// Result's JSON with what JSON leaves out (the histograms, what the
// cross-check of the database's counters needs), so that the result the
// runner stores is the one the driver measured.
type Wire struct {
	Result             *Result                           `json:"result"`
	Histograms         map[string]*hdrhistogram.Snapshot `json:"histograms,omitempty"` // by TxKind's String
	DeferredCompletion *hdrhistogram.Snapshot            `json:"deferred_completion,omitempty"`
	CountersRead       bool                              `json:"counters_read,omitempty"`
	TxCountSource      string                            `json:"tx_count_source,omitempty"`
	TxCountsOwn        dialect.StatementCounting         `json:"tx_counts_own,omitempty"`
}

// ToWire is r ready to send.
func (r *Result) ToWire() Wire {
	w := Wire{Result: r, Histograms: map[string]*hdrhistogram.Snapshot{}, CountersRead: r.countersRead,
		TxCountSource: r.txCountSource, TxCountsOwn: r.txCountsOwn}
	for k, h := range r.hists {
		if h != nil {
			w.Histograms[tpcc.TxKind(k).String()] = h.Export()
		}
	}
	if r.deferredCompletion != nil {
		w.DeferredCompletion = r.deferredCompletion.Export()
	}
	return w
}

// FromWire is the Result a driver elsewhere sent.
func (w Wire) FromWire() (*Result, error) {
	r := w.Result
	if r == nil {
		return nil, fmt.Errorf("a remote driver's answer holds no result")
	}
	r.countersRead, r.txCountSource, r.txCountsOwn = w.CountersRead, w.TxCountSource, w.TxCountsOwn
	for k := range tpcc.NumTxKinds {
		if s := w.Histograms[tpcc.TxKind(k).String()]; s != nil {
			r.hists[k] = hdrhistogram.Import(s)
		}
	}
	if w.DeferredCompletion != nil {
		r.deferredCompletion = hdrhistogram.Import(w.DeferredCompletion)
	}
	return r, nil
}
