package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultMaxRepeats is the most runs an adaptive step measures when the
// plan does not say (repeat: auto without max_repeats).
const DefaultMaxRepeats = 10

// DefaultPrecision is the precision an adaptive step aims at when the
// plan does not say: the 95% interval within 5% of the mean.
const DefaultPrecision = 0.05

// StopRule is when a step measured with `repeat: auto` stops: as soon as
// it has at least Min runs and the 95% interval of what it estimates
// (the mean NOPM of its runs, or their ratio to a baseline's) lies within
// Precision of the estimate; or when it has Max runs, the budget.
//
// Source. Kalibera and Jones ("Rigorous benchmarking in reasonable
// time", ISMM 2013) size an experiment's repetitions so that the 95%
// interval's half-width is a chosen share of the mean, from the
// variation measured in a first, dimensioning experiment. oltplab sizes
// them as it goes instead: after every run it recomputes the interval
// from all the step's runs and stops at the first n >= Min where it is
// within the precision: a sequential fixed-width interval (Chow and
// Robbins, "On the asymptotic theory of fixed-width sequential
// confidence intervals for the mean", Ann. Math. Statist. 36, 1965), in
// its relative form (Law and Kelton, "Simulation modeling and
// analysis", sequential procedure for a relative precision), with
// Student's t in place of the normal quantile.
//
// The interval is the one every figure gets (Summary, Ratio, Paired): on
// the log scale, est*exp(-/+h). "Within the precision p" is h <=
// log(1+p): the truth then lies within a factor 1+p of the estimate
// either way, so its relative error against the truth is at most p too
// (the correction Law and Kelton make with p/(1+p)).
//
// Optional stopping. Stopping when the interval happens to be narrow
// biases it: a step that stops early often had runs that agreed by
// chance, and its interval covers the truth less often than 95%. oltplab
// bounds the bias three ways: no stop before Min runs (at least
// MinRepeats; three give Student's t = 4.30, so an early stop needs runs
// that agree very closely), Student's t at n-1 degrees of freedom rather
// than the normal quantile Chow and Robbins use, and the cap Max; and it
// says which ended a step (StopReason) with the precision reached, so a
// reader sees a budget that ran out. TestStopRuleCoverage measures the
// coverage that remains by simulation (normal runs, precision 5%, Max
// 10): 91-95% at Min 3, lowest when the runs' own spread is near the
// precision, and 93-95% at Min 5 (with the normal quantile it would be
// 80-86% at Min 3). A plan that needs the full 95% raises min_repeats.
type StopRule struct {
	// Precision is the largest relative half-width accepted (0.05: 5%).
	Precision float64 `json:"precision"`
	// Min is the fewest runs before any stop; at least MinRepeats.
	Min int `json:"min"`
	// Max is the most runs of a step: the budget.
	Max int `json:"max"`
}

// Validate checks the rule's bounds.
func (r StopRule) Validate() error {
	switch {
	case !(r.Precision > 0) || r.Precision >= 1:
		return fmt.Errorf("precision must be above 0%% and below 100%%, got %s", FormatPrecision(r.Precision))
	case r.Min < MinRepeats:
		return fmt.Errorf("min_repeats must be at least %d (fewer runs give no interval), got %d", MinRepeats, r.Min)
	case r.Max < r.Min:
		return fmt.Errorf("max_repeats (%d) must be at least min_repeats (%d)", r.Max, r.Min)
	}
	return nil
}

// StopReason says why a step measured with the rule stopped.
type StopReason string

const (
	// StopPrecision: the interval came within the precision.
	StopPrecision StopReason = "precision"
	// StopBudget: the step reached its most runs first.
	StopBudget StopReason = "budget"
	// StopInterrupted: the profile ended before either (Ctrl-C, a failed
	// run); a resumed experiment continues the step.
	StopInterrupted StopReason = "interrupted"
)

// Decide is the rule after a step's n-th run, whose interval has
// relative half-width halfWidth (+Inf when there is none): StopPrecision,
// StopBudget, or "" to measure again. runs counts every run the step
// measured (the budget), n those whose figures count.
func (r StopRule) Decide(runs, n int, halfWidth float64) StopReason {
	switch {
	case n >= r.Min && r.Within(halfWidth):
		return StopPrecision
	case runs >= r.Max:
		return StopBudget
	}
	return ""
}

// Within reports whether a relative half-width meets the precision: on
// the log scale, log(1 + halfWidth) <= log(1 + Precision).
func (r StopRule) Within(halfWidth float64) bool {
	return !math.IsNaN(halfWidth) && halfWidth <= r.Precision
}

// Stopping is how a profile measured with `repeat: auto` stopped, as its
// parameters store it: the rule, the baseline whose ratio it bounded
// (empty: each step's own mean), and what it decided for each step.
type Stopping struct {
	Rule     StopRule `json:"rule"`
	Baseline string   `json:"baseline,omitempty"`
	Stops    []Stop   `json:"stops,omitempty"`
}

// Stop is what the rule decided for one step, stored with the profile.
type Stop struct {
	// Users is the step's virtual users (tpc-c: terminals).
	Users int `json:"users"`
	// Runs the step measured; Counted those whose figures count (the
	// others were suspect, partial or failed).
	Runs    int        `json:"runs"`
	Counted int        `json:"counted"`
	Reason  StopReason `json:"reason"`
	// HalfWidth is the relative half-width reached (0.043: +/-4.3%);
	// omitted (+Inf) when there was no interval.
	HalfWidth float64 `json:"half_width,omitempty"`
	// Of is what the interval bounds: "mean NOPM", "NOPM ratio to nvme",
	// "paired NOPM ratio to nvme".
	Of string `json:"of"`
}

// Stored is s as it is stored: JSON has no +Inf, so a half-width
// without an interval becomes 0 (omitted).
func (s Stop) Stored() Stop {
	if math.IsInf(s.HalfWidth, 0) || math.IsNaN(s.HalfWidth) {
		s.HalfWidth = 0
	}
	return s
}

// Text says what happened in one line: "stopped after 5 runs: the 95%
// interval of mean NOPM is within ±4.2% (precision 5%)".
func (s Stop) Text(precision float64) string {
	hw := "no interval"
	if s.HalfWidth > 0 {
		hw = "±" + FormatPrecision(s.HalfWidth)
	}
	runs := plural(s.Runs, "run")
	if s.Counted != s.Runs {
		runs += fmt.Sprintf(" (%d counted)", s.Counted)
	}
	switch s.Reason {
	case StopPrecision:
		return fmt.Sprintf("precision reached after %s: the 95%% interval of %s is %s (precision %s)", runs, s.Of, hw, FormatPrecision(precision))
	case StopBudget:
		return fmt.Sprintf("budget ended after %s: the 95%% interval of %s is %s, precision %s not reached", runs, s.Of, hw, FormatPrecision(precision))
	case StopInterrupted:
		return fmt.Sprintf("interrupted after %s: the 95%% interval of %s is %s (precision %s)", runs, s.Of, hw, FormatPrecision(precision))
	}
	return fmt.Sprintf("%s: %s", runs, hw)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ParsePrecision reads a precision written as a percentage: "5%", "2.5%".
func ParsePrecision(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, fmt.Errorf("precision %q: want a percentage such as 5%%", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("precision %q: want a percentage such as 5%%", s)
	}
	if v <= 0 || v >= 100 {
		return 0, errors.New("precision must be above 0% and below 100%, got " + s)
	}
	return v / 100, nil
}

// FormatPrecision writes a fraction as ParsePrecision reads it: 0.05 ->
// "5%", 0.025 -> "2.5%".
func FormatPrecision(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}

// Adaptive runs the steps of a profile measured with a StopRule: it
// hands out their slots in the profile's order (Order with the rule's Max
// as repeats), skips the slots of a step that has stopped, and keeps what
// the rule decided for each step. It is the loop of `repeat: auto`
// without the measuring: the caller measures each slot Next returns and
// tells Record what came of it.
type Adaptive struct {
	rule    StopRule
	users   []int
	slots   []Slot
	pos     int
	done    map[Slot]bool
	runs    []int
	counted []int
	last    []float64 // each step's latest half-width
	of      []string
	stops   []Stop // Reason "" while the step runs
}

// NewAdaptive returns the loop over steps of the given users.
func NewAdaptive(users []int, rule StopRule, interleave bool) *Adaptive {
	n := len(users)
	a := &Adaptive{rule: rule, users: users, slots: Order(n, rule.Max, interleave), done: map[Slot]bool{},
		runs: make([]int, n), counted: make([]int, n), last: make([]float64, n), of: make([]string, n), stops: make([]Stop, n)}
	for i := range a.last {
		a.last[i] = math.Inf(1)
	}
	return a
}

// Rule is the loop's stopping rule.
func (a *Adaptive) Rule() StopRule { return a.rule }

// Keep records a slot an earlier attempt measured (a resumed profile):
// Next skips it and it counts towards its step's runs. Call Check for the
// steps once every kept slot is recorded.
func (a *Adaptive) Keep(s Slot, counted bool) {
	if s.Step < 0 || s.Step >= len(a.users) || a.done[s] {
		return
	}
	a.done[s] = true
	a.runs[s.Step]++
	if counted {
		a.counted[s.Step]++
	}
}

// Next returns the next slot to measure and its index in the full order
// (from which a run's seed is drawn, so that a resumed profile measures
// each slot with the seed it would have had); false when every step has
// stopped.
func (a *Adaptive) Next() (int, Slot, bool) {
	for ; a.pos < len(a.slots); a.pos++ {
		s := a.slots[a.pos]
		if a.done[s] || a.stops[s.Step].Reason != "" {
			continue
		}
		return a.pos, s, true
	}
	return 0, Slot{}, false
}

// Record tells the loop that slot s was measured: whether its figure
// counts (a suspect, partial or failed run's does not), and the relative
// half-width of the step's interval over its counted runs now, of what
// (of: "mean NOPM", "NOPM ratio to nvme"). It returns the step's Stop
// and true when the rule ends the step.
func (a *Adaptive) Record(s Slot, counted bool, halfWidth float64, of string) (Stop, bool) {
	if !a.done[s] {
		a.done[s] = true
		a.runs[s.Step]++
		if counted {
			a.counted[s.Step]++
		}
	}
	return a.Check(s.Step, halfWidth, of)
}

// Check applies the rule to step as it stands, with the half-width of
// its interval now: a resumed profile checks each step it kept runs of.
func (a *Adaptive) Check(step int, halfWidth float64, of string) (Stop, bool) {
	a.last[step], a.of[step] = halfWidth, of
	if a.stops[step].Reason != "" {
		return a.stops[step], false
	}
	why := a.rule.Decide(a.runs[step], a.counted[step], halfWidth)
	if why == "" {
		return Stop{}, false
	}
	a.stops[step] = a.stop(step, why)
	return a.stops[step], true
}

func (a *Adaptive) stop(step int, why StopReason) Stop {
	return Stop{Users: a.users[step], Runs: a.runs[step], Counted: a.counted[step], Reason: why,
		HalfWidth: a.last[step], Of: a.of[step]}.Stored()
}

// Stops is what the rule decided for every step that measured
// something: a step the loop left before the rule ended it (the profile
// was interrupted, or a run failed) is StopInterrupted.
func (a *Adaptive) Stops() []Stop {
	var out []Stop
	for i, s := range a.stops {
		switch {
		case s.Reason != "":
			out = append(out, s)
		case a.runs[i] > 0:
			out = append(out, a.stop(i, StopInterrupted))
		}
	}
	return out
}

// StopRuleMethod explains the stopping rule in a few sentences, for the
// method part of a report and the README.
const StopRuleMethod = "Repeat auto: a step is measured until the 95% interval of its mean NOPM (for a target other than the " +
	"baseline, once the baseline has measured that step: of its NOPM ratio to the baseline's; in an interleaved comparison, of the " +
	"paired ratio) lies within the plan's precision of the estimate, after at least min_repeats (3 or more) and at most max_repeats " +
	"runs; every step says which ended it, the precision or the budget. The repetitions are sized to a precision as Kalibera and " +
	"Jones recommend (\"Rigorous benchmarking in reasonable time\", ISMM 2013), decided after every run rather than from a first " +
	"dimensioning experiment: a sequential fixed-width interval (Chow and Robbins, 1965) in its relative form, on the log scale with " +
	"Student's t. Stopping when an interval happens to be narrow makes it cover the truth less often than 95% (optional stopping): " +
	"the minimum of 3 runs, Student's t and the cap keep it at 91-95% in simulation (93-95% with min_repeats 5). A run that is " +
	"suspect, partial or failed takes a run of the budget and counts nothing."
