package tpch

import "fmt"

// What the tests of clause 5 measure, as stored: the timing interval of
// every query and refresh function (clause 5.3.7), per query stream, and
// the numerical quantities of clause 5.4 computed from them. A query or
// refresh function that did not complete has an Outcome that says why and
// no time: it is never counted as one, and the figures it would enter are
// absent, with the reason.

// Outcome is how a query or refresh function ended.
type Outcome string

const (
	// Done: it completed; its time is measured.
	Done Outcome = "ok"
	// TimedOut: the query timeout cut it off; it has no time.
	TimedOut Outcome = "timeout"
	// Failed: the database returned an error.
	Failed Outcome = "error"
	// Canceled: the test was interrupted while it ran.
	Canceled Outcome = "canceled"
	// NotRun: the test ended before it started.
	NotRun Outcome = "not run"
)

// QueryTime is one query of a query stream.
type QueryTime struct {
	Stream int `json:"stream"`
	Query  int `json:"query"`
	// Position is the query's place in its stream's order, from 1.
	Position int      `json:"position"`
	Params   []string `json:"params,omitempty"`
	// StartMillis is when it was submitted, from the test's origin.
	StartMillis int64 `json:"start_ms"`
	// Seconds is the timing interval as measured (clause 5.3.7.1: from
	// the submission of the text to the last row received; Q15's view
	// created and dropped inside it); Interval is it rounded as clause
	// 5.3.7.5 rounds. Both are 0 unless Outcome is Done.
	Seconds  float64 `json:"seconds,omitempty"`
	Interval float64 `json:"interval,omitempty"`
	Rows     int     `json:"rows,omitempty"`
	Outcome  Outcome `json:"outcome"`
	Error    string  `json:"error,omitempty"`
}

// RefreshTime is one execution of a refresh function (clause 2.5).
type RefreshTime struct {
	// Function is 1 (RF1, new sales) or 2 (RF2, old sales).
	Function int `json:"function"`
	// Set is the update set it applied (dbgen -U's numbering).
	Set         int     `json:"set"`
	StartMillis int64   `json:"start_ms"`
	Seconds     float64 `json:"seconds,omitempty"`
	Interval    float64 `json:"interval,omitempty"`
	// Orders and LineItems are the rows it inserted (RF1) or deleted (RF2).
	Orders    int64   `json:"orders,omitempty"`
	LineItems int64   `json:"lineitems,omitempty"`
	Outcome   Outcome `json:"outcome"`
	Error     string  `json:"error,omitempty"`
}

// Name is "RF1" or "RF2".
func (r RefreshTime) Name() string { return fmt.Sprintf("RF%d", r.Function) }

// StreamResult is one query stream: its 22 queries in the order it ran
// them (StreamQueries), with the qgen seed their parameters came from.
type StreamResult struct {
	Stream      int         `json:"stream"`
	Seed        int64       `json:"seed"`
	StartMillis int64       `json:"start_ms"`
	EndMillis   int64       `json:"end_ms"`
	Queries     []QueryTime `json:"queries"`
	// GeoMean is the geometric mean of its 22 query intervals; nil when
	// a query has no time.
	GeoMean *float64 `json:"geo_mean,omitempty"`
}

// Complete reports whether every query of the stream was timed.
func (s StreamResult) Complete() bool {
	if len(s.Queries) != Queries {
		return false
	}
	for _, q := range s.Queries {
		if q.Outcome != Done {
			return false
		}
	}
	return true
}

// ByQuery returns the stream's query of number q (1..22), or nil.
func (s StreamResult) ByQuery(q int) *QueryTime {
	for i := range s.Queries {
		if s.Queries[i].Query == q {
			return &s.Queries[i]
		}
	}
	return nil
}

// finish fills GeoMean.
func (s *StreamResult) finish() {
	s.GeoMean = nil
	if !s.Complete() {
		return
	}
	xs := make([]float64, len(s.Queries))
	for i, q := range s.Queries {
		xs[i] = q.Seconds
	}
	if g, err := GeoMean(xs); err == nil {
		s.GeoMean = &g
	}
}

// PowerResult is a power test (clause 5.3.3): RF1, query stream 0, RF2.
type PowerResult struct {
	StartMillis int64        `json:"start_ms"`
	EndMillis   int64        `json:"end_ms"`
	RF1         RefreshTime  `json:"rf1"`
	Stream      StreamResult `json:"stream"`
	RF2         RefreshTime  `json:"rf2"`
	// Power is Power@Size (clause 5.4.1); nil when a query or refresh
	// function has no time, and Absent says which.
	Power  *float64 `json:"power_at_size,omitempty"`
	Absent string   `json:"power_absent,omitempty"`
	// Floored: clause 5.4.1.4 raised the shortest query intervals to
	// the longest's thousandth.
	Floored bool `json:"floored,omitempty"`
}

// Finish computes the stream's geometric mean and Power@Size at scale s.
func (p *PowerResult) Finish(s Scale) {
	p.Stream.finish()
	p.Power, p.Absent, p.Floored = nil, "", false
	var in PowerInputs
	var missing []string
	for i, rf := range []RefreshTime{p.RF1, p.RF2} {
		if rf.Outcome != Done {
			missing = append(missing, fmt.Sprintf("RF%d %s", i+1, rf.Outcome))
		}
		in.Refresh[i] = rf.Seconds
	}
	for q := 1; q <= Queries; q++ {
		qt := p.Stream.ByQuery(q)
		switch {
		case qt == nil:
			missing = append(missing, fmt.Sprintf("Q%d %s", q, NotRun))
		case qt.Outcome != Done:
			missing = append(missing, fmt.Sprintf("Q%d %s", q, qt.Outcome))
		default:
			in.Queries[q-1] = qt.Seconds
		}
	}
	if len(missing) > 0 {
		p.Absent = absentBecause(missing)
		return
	}
	v, used, err := Power(s, in)
	if err != nil {
		p.Absent = err.Error()
		return
	}
	for q := range Queries {
		if used[q] != Interval(in.Queries[q]) {
			p.Floored = true
		}
	}
	p.Power = &v
}

// ThroughputResult is a throughput test (clause 5.3.4): S query streams
// and the refresh stream's S pairs of RF1 and RF2, at once.
type ThroughputResult struct {
	StartMillis int64          `json:"start_ms"`
	EndMillis   int64          `json:"end_ms"`
	Streams     []StreamResult `json:"streams"`
	Refresh     []RefreshTime  `json:"refresh"`
	// Seconds is the measurement interval Ts (clause 5.3.7.4): from the
	// first query or refresh function submitted to the last one done.
	Seconds float64 `json:"ts_seconds"`
	// Throughput is Throughput@Size (clause 5.4.2); nil when a query or
	// refresh function has no time, and Absent says which.
	Throughput *float64 `json:"throughput_at_size,omitempty"`
	Absent     string   `json:"throughput_absent,omitempty"`
}

// Finish computes each stream's geometric mean and Throughput@Size at
// scale s.
func (t *ThroughputResult) Finish(s Scale) {
	t.Throughput, t.Absent = nil, ""
	var missing []string
	for i := range t.Streams {
		st := &t.Streams[i]
		st.finish()
		for q := 1; q <= Queries; q++ {
			if qt := st.ByQuery(q); qt == nil || qt.Outcome != Done {
				o := NotRun
				if qt != nil {
					o = qt.Outcome
				}
				missing = append(missing, fmt.Sprintf("stream %d Q%d %s", st.Stream, q, o))
			}
		}
	}
	if len(t.Refresh) != 2*len(t.Streams) {
		missing = append(missing, fmt.Sprintf("%d of the %d refresh functions run", len(t.Refresh), 2*len(t.Streams)))
	}
	for _, rf := range t.Refresh {
		if rf.Outcome != Done {
			missing = append(missing, fmt.Sprintf("%s of set %d %s", rf.Name(), rf.Set, rf.Outcome))
		}
	}
	if len(t.Streams) == 0 {
		missing = append(missing, "no query stream")
	}
	if len(missing) > 0 {
		t.Absent = absentBecause(missing)
		return
	}
	v, err := Throughput(s, len(t.Streams), t.Seconds)
	if err != nil {
		t.Absent = err.Error()
		return
	}
	t.Throughput = &v
}

// absentBecause says which queries or refresh functions left a figure
// without a value: the first few, and how many more.
func absentBecause(missing []string) string {
	const shown = 4
	s := ""
	for i, m := range missing[:min(shown, len(missing))] {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	if len(missing) > shown {
		s += fmt.Sprintf(" and %d more", len(missing)-shown)
	}
	return "not computed: " + s + " (a query or refresh function without a time enters no figure)"
}
