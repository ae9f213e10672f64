package report

import (
	"time"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/profile"
)

// Input is everything a report shows: one or more profiles, the first
// being the baseline every ratio is taken against.
type Input struct {
	Title     string    `json:"title"`
	Generated time.Time `json:"generated"`
	// Version is the oltplab version (and revision) that rendered the
	// report, shown in the footer.
	Version  string    `json:"version"`
	Profiles []Profile `json:"profiles"`
	// Monitors are monitor results shown beside (or instead of) profiles.
	Monitors []Monitor `json:"monitors,omitempty"`
	// Experiment, when set, makes this an experiment's report: its
	// targets and schedule, then one section per step of its plan, then
	// what differs between its targets. Profiles is then unused.
	Experiment *Experiment `json:"experiment,omitempty"`
	// Sections, in a report without an Experiment, are parts shown after
	// the profiles and monitors, each as a step kind reports it (a report
	// of stored TPC-H results). An experiment's sections are its own.
	Sections []Section `json:"sections,omitempty"`
	// Links, when set, are shown under the title of the HTML report (the
	// results browser's way back and downloads); a saved report has none.
	Links []Link `json:"-"`
}

// Link is a link under an HTML report's title; the template escapes both.
type Link struct {
	Text, Href string
}

// Experiment is one plan run (`oltplab experiment run`).
type Experiment struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Question is what the plan asks (its question: field), stated on the
	// report's first page with an answer for each target; "" for none.
	Question string `json:"question,omitempty"`
	Status   string `json:"status"`
	// Baseline names the target every ratio is taken against; it comes
	// first in every section.
	Baseline string             `json:"baseline"`
	Targets  []ExperimentTarget `json:"targets"`
	Schedule []ScheduleEntry    `json:"schedule"`
	// Sections are the plan's steps in order, each as its kind reports it.
	Sections []Section `json:"sections"`
	// Cost is the price/performance of the targets that have prices; nil
	// when none has.
	Cost *CostSection `json:"cost,omitempty"`
	// Method is what the method section states about the plan: its
	// scale and steps as run.
	Method []string `json:"method,omitempty"`
}

// CostSection is an experiment's cost table with what it was computed
// from.
type CostSection struct {
	Table cost.Table `json:"table"`
	// Step names the profile step whose measurements were priced.
	Step string `json:"step"`
	// Unpriced lists the targets without prices (left out of the table).
	Unpriced []string `json:"unpriced,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// ExperimentTarget is one target of an experiment.
type ExperimentTarget struct {
	Name string `json:"name"`
	// Display says what the target is: a redacted URL, or a managed
	// instance's engine and directory.
	Display string `json:"display"`
	Dialect string `json:"dialect"`
	// Context is what was recorded about the target (its instance's
	// settings, host, storage, database), flattened; the report shows the
	// keys whose values differ between targets.
	Context map[string]string `json:"context,omitempty"`
	// FullContext is everything recorded about the target (ids, times,
	// tool and paths included), for the report's appendix. It must hold
	// no secrets.
	FullContext map[string]string `json:"full_context,omitempty"`
}

// ScheduleEntry is one (target, step) of the experiment's schedule.
type ScheduleEntry struct {
	Seq      int    `json:"seq"`
	Target   string `json:"target"` // "" for a step over all targets
	Step     string `json:"step"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Headline string `json:"headline,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Section is what one step of the plan reports: profiles (one per
// target, the baseline first) drawn as the profile report draws them,
// and tables of its own.
type Section struct {
	Title string `json:"title"`
	Kind  string `json:"kind"`
	// Part is the part of the study report the section belongs in
	// (storage, backup, rebuild, neighbours: see studyParts); empty for
	// the part of its Kind.
	Part     string    `json:"part,omitempty"`
	Note     string    `json:"note,omitempty"`
	Profiles []Profile `json:"profiles,omitempty"`
	Tables   []Table   `json:"tables,omitempty"`
	// Charts are time series the step draws itself (after its tables).
	Charts []TimeChart `json:"charts,omitempty"`
	// Method is what the step adds to the report's method part (how its
	// figures were analysed); the experiment's Method carries it.
	Method []string `json:"-"`
	// Findings are sentences the study report's summary states for the
	// step: its headline for a reader, the comparison it exists for
	// first (a profile step's ratios the report computes itself; these
	// are beside them, a paired comparison's).
	Findings []string `json:"findings,omitempty"`
	// Answers are what the step found for each target, a clause each
	// ("backs up in 12.3 s, 0.52× disk's time"): the summary's answer
	// for a target joins its clauses from every step into one sentence.
	Answers []Answer `json:"answers,omitempty"`
	// Bars are bar charts over categories (TPC-H's queries) the step
	// draws itself, after its tables and before its time series.
	Bars []BarChart `json:"bars,omitempty"`
}

// Answer is one target's clause of a step's answer.
type Answer struct {
	Target string `json:"target"`
	Text   string `json:"text"`
}

// BarChart is a chart of grouped bars over named categories (queries) a
// section draws itself: one group per category, one bar per series
// (target) drawn from zero, a whisker from Lo to Hi (the range over
// repeats) where both are set, and a short text over each bar (a ratio
// to the first series) where Texts has one.
type BarChart struct {
	Title      string      `json:"title"`
	Note       string      `json:"note,omitempty"`
	YLabel     string      `json:"y_label"`
	Categories []string    `json:"categories"`
	Series     []BarSeries `json:"series"`
}

// BarSeries is one series of a BarChart: a value per category (nil
// where it has none), with optional whisker bounds and texts, each as
// long as the chart's Categories when set.
type BarSeries struct {
	Label  string     `json:"label"`
	Values []*float64 `json:"values"`
	Lo     []*float64 `json:"lo,omitempty"`
	Hi     []*float64 `json:"hi,omitempty"`
	// Texts replace the value written over each bar ("" keeps it).
	Texts []string `json:"texts,omitempty"`
}

// TimeChart is a time series a section draws itself: x in seconds from
// an origin the chart names (XLabel), one or more series, and spans of
// the x axis marked on it (phases as bands, events such as a backup as
// outlined intervals).
type TimeChart struct {
	Title   string       `json:"title"`
	Note    string       `json:"note,omitempty"`
	XLabel  string       `json:"x_label"`
	YLabel  string       `json:"y_label"`
	Y2Label string       `json:"y2_label,omitempty"`
	X       []float64    `json:"x"`
	Series  []TimeSeries `json:"series"`
	Spans   []Span       `json:"spans,omitempty"`
}

// TimeSeries is one line of a TimeChart: a value per x (nil where there
// is none), read on the right-hand axis when Right is set.
type TimeSeries struct {
	Label  string     `json:"label"`
	Values []*float64 `json:"values"`
	Right  bool       `json:"right,omitempty"`
	Dash   bool       `json:"dash,omitempty"`
}

// SpanKind is how a Span is drawn.
type SpanKind string

const (
	// SpanPhase is a phase of the scenario: a pale band across the chart
	// with its name, and a line at each edge.
	SpanPhase SpanKind = "phase"
	// SpanEvent is an event with a duration (a backup): a shaded interval
	// outlined by a line at its start and end, named.
	SpanEvent SpanKind = "event"
	// SpanFault is a stretch the server failed the run (an outage, a
	// stall): shaded red, named.
	SpanFault SpanKind = "fault"
)

// Span marks [From, To] seconds of a TimeChart's x axis.
type Span struct {
	Label string   `json:"label"`
	From  float64  `json:"from"`
	To    float64  `json:"to"`
	Kind  SpanKind `json:"kind"`
}

// Table is a table a section fills itself: a title, a note, a header and
// rows of already formatted cells.
type Table struct {
	Title  string     `json:"title"`
	Note   string     `json:"note,omitempty"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	// Right right-aligns the columns of numbers (by index).
	Right []bool `json:"right,omitempty"`
}

// Profile is one virtual-user sweep (one `oltplab run ... --label`).
type Profile struct {
	ID    int64  `json:"id"`
	Label string `json:"label"`
	// Target is the display form of the database target. It must already
	// be redacted (dialect.Target's String form); the renderers blank
	// any URL password they still find, as a last line of defence.
	Target  string `json:"target"`
	Dialect string `json:"dialect"`
	// Mode labels how the profile paced its users ("tproc-c (no keying
	// or think time)", "tpc-c (keying and think times, ...)"): figures of
	// different modes measure different things.
	Mode string `json:"mode,omitempty"`
	// Context is the profile's context flattened to key/value (host.*,
	// db.*, param.*): the keys whose values differ between profiles are
	// highlighted. It must hold no secrets.
	Context map[string]string `json:"context,omitempty"`
	Steps   []Step            `json:"steps"`
	// Verdict is profile.Analyze of the steps (see Profile.StepFigures);
	// the caller computes it so that it can choose the threshold.
	Verdict profile.Verdict `json:"verdict"`
	// Series is the per-second series of one chosen run (nil when none).
	Series *StepSeries `json:"series,omitempty"`
	// Limits are caps the target was given, drawn as reference lines:
	// "read_iops", "write_iops" (the I/O limit of a managed instance).
	Limits map[string]float64 `json:"limits,omitempty"`
	// Throttle is the I/O cap the target's instance had (its io_limit,
	// e.g. "read_iops=120,write_iops=120"), "" for none: its device
	// latency then leaves out the time its I/O waited in the throttle.
	Throttle string `json:"throttle,omitempty"`
	// Stopping is how a profile measured with `repeat: auto` stopped each
	// step; nil for a fixed number of repeats.
	Stopping *profile.Stopping `json:"stopping,omitempty"`
}

// StopAt is what the stopping rule decided for the step of vus users.
func (p Profile) StopAt(vus int) (profile.Stop, bool) {
	if p.Stopping == nil {
		return profile.Stop{}, false
	}
	for _, s := range p.Stopping.Stops {
		if s.Users == vus {
			return s, true
		}
	}
	return profile.Stop{}, false
}

// Step is one virtual-user (or tpc-c terminal) count of a profile with
// its repeats.
type Step struct {
	VUs     int      `json:"vus"`
	Repeats []Repeat `json:"repeats"`
	// NOPM, TPM and TPMPerVU summarise the repeats that count (NewStepWith
	// leaves partial repeats out).
	NOPM     profile.Summary `json:"nopm"`
	TPM      profile.Summary `json:"tpm"`
	TPMPerVU profile.Summary `json:"tpm_per_vu"`
	// Latency holds the latency percentiles per transaction kind
	// ("new_order", "payment", ...), over all counted repeats.
	Latency map[string]LatencyFigures `json:"latency,omitempty"`
	// Host holds host and database figures when they were sampled; nil
	// for runs measured without samplers.
	Host *HostFigures `json:"host,omitempty"`
	// CPU is who used the CPU over the step's measured windows, every
	// run that measured one included (contaminated and failed ones: they
	// are where it matters); nil when it was not sampled.
	CPU *CPUShares `json:"cpu,omitempty"`
}

// CPUShares is who used the host's CPU, in cores averaged over windows:
// the database server, oltplab (driver and samplers), others (foreign),
// steal and idle add up to the host's cores.
type CPUShares struct {
	Runs      int     `json:"runs"`
	HostCores float64 `json:"host_cores"`
	// ServerCores is nil when the server's CPU was not measured; then
	// ForeignCores is nil too unless the server uses none of this host's
	// (another host; embedded in oltplab).
	ServerCores  *float64 `json:"server_cores,omitempty"`
	OltplabCores float64  `json:"oltplab_cores"`
	ForeignCores *float64 `json:"foreign_cores,omitempty"`
	StealCores   float64  `json:"steal_cores"`
	IdleCores    float64  `json:"idle_cores"`
	// ServerSource says whose CPU ServerCores is, or why there is none.
	ServerSource string `json:"server_source,omitempty"`
	// CPUSet and CPUSetForeignPct: the server's own CPUs, when it was
	// confined, and the foreign CPU on them in percent of their cores.
	CPUSet           string   `json:"cpuset,omitempty"`
	CPUSetForeignPct *float64 `json:"cpuset_foreign_pct,omitempty"`
}

// Include says which runs beyond the ok ones a step's statistics, peaks
// and verdicts count: suspect ones (--include-suspect) and contaminated
// ones (--include-contaminated). The zero value counts neither.
type Include struct {
	Suspect      bool `json:"suspect,omitempty"`
	Contaminated bool `json:"contaminated,omitempty"`
}

// Repeat is one measured run of a step.
type Repeat struct {
	RunID int64   `json:"run_id"`
	NOPM  float64 `json:"nopm"`
	TPM   float64 `json:"tpm"`
	// Partial marks a run that did not complete its timed window (it was
	// interrupted or failed); it is shown but not summarised.
	Partial bool `json:"partial"`
	// Failures marks a run measured to its end in which more transactions
	// failed than it allowed (--max-failure-rate, status "failures"): not
	// a success, shown as such and not summarised. It is not Partial.
	Failures bool `json:"failures,omitempty"`
	// Suspect marks a run whose database figures disagreed with the
	// driver's own counts (Reasons says how). It is shown, in red, but not
	// summarised, so it takes no part in peaks and verdicts, unless the
	// step was made with NewStepWith(..., true).
	Suspect bool     `json:"suspect,omitempty"`
	Reasons []string `json:"suspect_reasons,omitempty"`
	// Contaminated marks a run measured while others took more of the
	// CPU than allowed (Interference says what); it is shown but not
	// summarised unless the step counts contaminated runs (Include).
	Contaminated bool     `json:"contaminated,omitempty"`
	Interference []string `json:"interference,omitempty"`
	// ServerFailed marks a run whose server failed under it (Faults says
	// how): it is Partial too, never summarised.
	ServerFailed bool `json:"server_failed,omitempty"`
	// Counted marks a suspect or contaminated repeat the caller chose to
	// summarise.
	Counted bool `json:"counted,omitempty"`
	// TPCC is the verdict of a run of the tpc-c mode; nil otherwise.
	TPCC *TPCC `json:"tpcc,omitempty"`
	// Faults describes what went wrong on the server's side during the
	// run: outages, figures that are the driver's own counts and why, too
	// many failed transactions. Such a run is shown apart too.
	Faults []string `json:"faults,omitempty"`
}

// TPCC is the verdict of one run of the tpc-c mode: its New-Order rate
// against the most its terminals could submit, and the checks a figure
// must pass to be called tpmC (TpmC is set only when every one passed).
type TPCC struct {
	Terminals             int         `json:"terminals"`
	NewOrdersPerMinute    float64     `json:"new_orders_per_minute"`
	MaxNewOrdersPerMinute float64     `json:"max_new_orders_per_minute"`
	EfficiencyPct         float64     `json:"efficiency_pct"`
	TpmC                  *float64    `json:"tpmc,omitempty"`
	Checks                []TPCCCheck `json:"checks"`
}

// TPCCCheck is one check of a tpc-c run: what was measured against its
// limit, in Unit, from TPC-C clause Clause.
type TPCCCheck struct {
	Name   string  `json:"name"`
	Clause string  `json:"clause,omitempty"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	Unit   string  `json:"unit,omitempty"`
	Pass   bool    `json:"pass"`
}

// LatencyFigures are the latency percentiles of one transaction kind.
type LatencyFigures struct {
	// P90Millis is what a latency objective is set on (TPC-C 5.2.5.3
	// sets its limits on the 90th percentile).
	P90Millis float64 `json:"p90_ms,omitempty"`
	P95Millis float64 `json:"p95_ms"`
	P99Millis float64 `json:"p99_ms"`
}

// NewStepWith summarises the complete (non-partial) repeats of one step
// that are neither suspect, contaminated nor over their failure rate:
// NOPM, TPM and TPM per virtual user, each with profile.Summarize; it
// also summarises the suspect and the
// contaminated repeats when inc says so (marking them Counted).
func NewStepWith(vus int, repeats []Repeat, latency map[string]LatencyFigures, inc Include) Step {
	var nopm, tpm, perVU []float64
	for i, r := range repeats {
		if r.Partial || r.Failures || r.Suspect && !inc.Suspect || r.Contaminated && !inc.Contaminated {
			continue
		}
		if r.Suspect || r.Contaminated {
			repeats[i].Counted = true
		}
		nopm = append(nopm, r.NOPM)
		tpm = append(tpm, r.TPM)
		if vus > 0 {
			perVU = append(perVU, r.TPM/float64(vus))
		}
	}
	return Step{
		VUs:      vus,
		Repeats:  repeats,
		NOPM:     profile.Summarize(nopm),
		TPM:      profile.Summarize(tpm),
		TPMPerVU: profile.Summarize(perVU),
		Latency:  latency,
	}
}

// CountedNOPM is the NOPM of the repeats s summarises (those NewStep
// counts): what a ratio or a stopping rule takes from the step.
func (s Step) CountedNOPM() []float64 {
	var out []float64
	for _, r := range s.Repeats {
		if r.Partial || r.Failures || r.Suspect && !r.Counted {
			continue
		}
		out = append(out, r.NOPM)
	}
	return out
}

// StepFigures converts the steps of p for profile.Analyze, taking the
// p99 latency of transaction kind latencyKind (0 when the kind is
// absent, which disables the latency rule).
func (p Profile) StepFigures(latencyKind string) []profile.StepFigures {
	out := make([]profile.StepFigures, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = profile.StepFigures{VUs: s.VUs, NOPM: s.NOPM, TPM: s.TPM, P99Millis: s.Latency[latencyKind].P99Millis}
	}
	return out
}

// Monitor is one stored monitor result (`oltplab monitor`): the host, and
// the database when a target was given, sampled while something else made
// the load. It has no steps and no throughput.
type Monitor struct {
	RunID int64  `json:"run_id"`
	Label string `json:"label"`
	// Target is the redacted target; empty when only the host was sampled.
	Target  string    `json:"target,omitempty"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Partial: the monitor was stopped before its duration.
	Partial bool `json:"partial"`
	// Figures are the averages over the whole monitor.
	Figures *HostFigures `json:"figures,omitempty"`
	// Points is the per-second series (CPU and the data or busiest disk;
	// the throughput fields stay 0).
	Points []SeriesPoint `json:"points,omitempty"`
	// Context is the monitor's context flattened to key/value.
	Context map[string]string `json:"context,omitempty"`
}
