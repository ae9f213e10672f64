package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/profile"
)

// view is the Input prepared for rendering: steps sorted by virtual
// users, display names made unique, the union of step sizes and latency
// kinds, ratios to the first profile and the context keys that differ.
// Every writer renders from it, so all formats show the same figures.
type view struct {
	in       Input
	profiles []profView
	monitors []Monitor // targets redacted
	vus      []int     // union of all steps' VUs, ascending
	kinds    []string  // union of latency kinds, sorted
	ctxKeys  []string  // union of context keys, sorted
	diff     map[string]bool
}

type profView struct {
	Profile
	Name  string
	byVUs map[int]int // VUs -> index in Steps
}

func newView(in Input) *view {
	v := &view{in: in, diff: map[string]bool{}}
	names := map[string]int{}
	for _, p := range in.Profiles {
		names[baseName(p)]++
	}
	vus := map[int]bool{}
	kinds := map[string]bool{}
	ctxs := make([]map[string]string, 0, len(in.Profiles))
	for _, p := range in.Profiles {
		p.Target = redactTarget(p.Target)
		p.Steps = slices.Clone(p.Steps)
		slices.SortStableFunc(p.Steps, func(a, b Step) int { return a.VUs - b.VUs })
		pv := profView{Profile: p, Name: baseName(p), byVUs: map[int]int{}}
		if names[pv.Name] > 1 {
			pv.Name = fmt.Sprintf("%s (#%d)", pv.Name, p.ID)
		}
		for i, s := range p.Steps {
			if _, dup := pv.byVUs[s.VUs]; !dup {
				pv.byVUs[s.VUs] = i
			}
			vus[s.VUs] = true
			for k := range s.Latency {
				kinds[k] = true
			}
		}
		v.profiles = append(v.profiles, pv)
		ctxs = append(ctxs, p.Context)
	}
	for _, m := range in.Monitors {
		m.Target = redactTarget(m.Target)
		v.monitors = append(v.monitors, m)
	}
	v.vus = slices.Sorted(maps.Keys(vus))
	v.kinds = slices.Sorted(maps.Keys(kinds))
	v.ctxKeys = profile.Keys(ctxs)
	for _, k := range profile.DiffKeys(ctxs) {
		v.diff[k] = true
	}
	return v
}

func baseName(p Profile) string {
	if p.Label != "" {
		return p.Label
	}
	return "profile " + strconv.FormatInt(p.ID, 10)
}

// step returns the step of profile pi with vus virtual users.
func (v *view) step(pi, vus int) (Step, bool) {
	i, ok := v.profiles[pi].byVUs[vus]
	if !ok {
		return Step{}, false
	}
	return v.profiles[pi].Steps[i], true
}

// ratios returns profile pi's NOPM and TPM at vus over the first
// profile's; ok is false when either profile lacks the step.
func (v *view) ratios(pi, vus int) (nopm, tpm profile.RatioCI, ok bool) {
	base, ok0 := v.step(0, vus)
	s, ok1 := v.step(pi, vus)
	if !ok0 || !ok1 {
		return profile.RatioCI{}, profile.RatioCI{}, false
	}
	return profile.Ratio(s.NOPM, base.NOPM), profile.Ratio(s.TPM, base.TPM), true
}

// table is a rendered table shared by the HTML and Markdown writers.
type table struct {
	ID     string
	Sub    bool // inside an experiment's step: a smaller heading
	Title  string
	Note   string
	Header []string
	Right  []bool // right-align column i (numbers)
	Rows   []row
}

type row struct {
	Cells []cell
	Diff  bool // a context key whose values differ
}

type cell struct {
	Text string
	Warn bool // high variation, partial repeats
	Dim  bool // not significant
	Bad  bool // a suspect result: figures that cannot be trusted
}

func texts(ss ...string) []cell {
	out := make([]cell, len(ss))
	for i, s := range ss {
		out[i] = cell{Text: s}
	}
	return out
}

func (v *view) profilesTable() table {
	t := table{ID: "profiles", Title: "Profiles",
		Header: []string{"#", "Profile", "Target", "Dialect", "Mode", "Users", "Repeats", "Partial", "Failures", "Suspect", "Contaminated"},
		Right:  []bool{true, false, false, false, false, false, true, true, true, true, true}}
	for _, p := range v.profiles {
		var vus []string
		minRep, maxRep, partial, failures, suspect, contaminated := -1, 0, 0, 0, 0, 0
		for _, s := range p.Steps {
			vus = append(vus, strconv.Itoa(s.VUs))
			n := len(s.Repeats)
			if minRep < 0 || n < minRep {
				minRep = n
			}
			maxRep = max(maxRep, n)
			for _, r := range s.Repeats {
				if r.Partial {
					partial++
				}
				if r.Failures {
					failures++
				}
				if r.Suspect {
					suspect++
				}
				if r.Contaminated {
					contaminated++
				}
			}
		}
		reps := dash
		switch {
		case minRep < 0:
		case minRep == maxRep:
			reps = strconv.Itoa(minRep)
		default:
			reps = fmt.Sprintf("%d–%d", minRep, maxRep)
		}
		mode := p.Mode
		if mode == "" {
			mode = dash
		}
		cells := texts(strconv.FormatInt(p.ID, 10), p.Name, p.Target, p.Dialect, mode, strings.Join(vus, ","), reps, strconv.Itoa(partial),
			strconv.Itoa(failures), strconv.Itoa(suspect), strconv.Itoa(contaminated))
		cells[7].Warn = partial > 0
		cells[8].Bad = failures > 0
		cells[9].Bad = suspect > 0
		cells[10].Bad = contaminated > 0
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// suspectTable lists every suspect run with why its database figures
// cannot be trusted; it is empty when there is none.
func (v *view) suspectTable() table {
	return v.runsApart(table{ID: "suspect", Title: "Suspect runs",
		Note: "The database's NOPM or TPM of these runs disagreed with the driver's own counts beyond the tolerance, " +
			"or went negative or backwards: something else changed the database during the run. " +
			"They are left out of the statistics, peaks and verdicts unless marked counted (--include-suspect).",
		Header: []string{"Profile", "VUs", "Run", "NOPM", "TPM", "Counted", "Why"}},
		func(r Repeat) ([]string, bool) { return r.Reasons, r.Suspect })
}

// contaminatedTable lists every contaminated run with the interference
// it met; it is empty when there is none.
func (v *view) contaminatedTable() table {
	return v.runsApart(table{ID: "contaminated", Title: "Contaminated runs",
		Note: "While these runs measured, other processes (foreign CPU: what neither the database server nor oltplab used) " +
			"or other machines (steal) took more of the cores than allowed: their figures may be theirs as much as the server's. " +
			"They are left out of the statistics, peaks and verdicts unless marked counted (--include-contaminated).",
		Header: []string{"Profile", "VUs", "Run", "NOPM", "TPM", "Counted", "Interference"}},
		func(r Repeat) ([]string, bool) { return r.Interference, r.Contaminated })
}

// runsApart fills t with a row per run that pick selects (its figures,
// whether it was counted anyway, and pick's reasons), marked bad; empty
// when pick selects none.
func (v *view) runsApart(t table, pick func(Repeat) ([]string, bool)) table {
	t.Right = []bool{false, true, true, true, true, false, false}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			for _, r := range s.Repeats {
				why, ok := pick(r)
				if !ok {
					continue
				}
				counted := "no"
				if r.Counted {
					counted = "yes"
				}
				cells := texts(p.Name, strconv.Itoa(s.VUs), strconv.FormatInt(r.RunID, 10), formatNumber(r.NOPM), formatNumber(r.TPM),
					counted, strings.Join(why, "; "))
				for i := range cells {
					cells[i].Bad = true
				}
				t.Rows = append(t.Rows, row{Cells: cells})
			}
		}
	}
	if len(t.Rows) == 0 {
		return table{}
	}
	return t
}

// tpccPrefix starts the name of each response-time check of a tpc-c run;
// the rest is the transaction kind.
const tpccPrefix = "response_time_p90_"

// tpccTable lists every run of the tpc-c mode: its New-Order rate against
// the most its terminals could submit, tpmC when every check passed, the
// 90th-percentile response time of each kind (and of the deferred
// Delivery) with pass or fail, and the checks that failed. It is empty
// when no run is of that mode.
func (v *view) tpccTable() table {
	t := table{ID: "tpcc", Title: "TPC-C checks",
		Note: "Runs of the tpc-c mode (keying and think times, deferred Delivery). A New-Order rate is called tpmC only " +
			"when every check passed: 10 terminals per warehouse (4.2.2), the 90th percentile of each transaction's " +
			"response time, counted from its intended start, within its limit (5 s, Stock-Level 20 s; deferred Delivery " +
			"80 s from queued to completed; 5.2.5.7, 2.7.2), the minimum mix (5.2.3), a complete window and the " +
			"database's figures agreeing with the driver's. p90 in seconds; FAIL marks a limit exceeded.",
		Header: []string{"Profile", "Terminals", "Run", "New-Orders/min", "Maximum", "of maximum", "tpmC"},
		Right:  []bool{false, true, true, true, true, true, true}}
	var kinds []string
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			for _, r := range s.Repeats {
				if r.TPCC == nil {
					continue
				}
				for _, c := range r.TPCC.Checks {
					if strings.HasPrefix(c.Name, tpccPrefix) || c.Name == "deferred_delivery_p90" {
						if k := strings.TrimPrefix(c.Name, tpccPrefix); !slices.Contains(kinds, k) {
							kinds = append(kinds, k)
						}
					}
				}
			}
		}
	}
	for _, k := range kinds {
		t.Header = append(t.Header, strings.TrimSuffix(k, "_p90")+" p90")
		t.Right = append(t.Right, true)
	}
	t.Header = append(t.Header, "Failed checks")
	t.Right = append(t.Right, false)
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			for _, r := range s.Repeats {
				x := r.TPCC
				if x == nil {
					continue
				}
				tpmC := "not tpmC"
				if x.TpmC != nil {
					tpmC = formatNumber(*x.TpmC)
				}
				cells := texts(p.Name, strconv.Itoa(x.Terminals), strconv.FormatInt(r.RunID, 10),
					formatNumber(x.NewOrdersPerMinute), formatNumber(x.MaxNewOrdersPerMinute),
					fmt.Sprintf("%.1f%%", x.EfficiencyPct), tpmC)
				cells[6].Warn = x.TpmC == nil
				var failed []string
				for _, k := range kinds {
					name := tpccPrefix + k
					if k == "deferred_delivery_p90" {
						name = k
					}
					i := slices.IndexFunc(x.Checks, func(c TPCCCheck) bool { return c.Name == name })
					if i < 0 {
						cells = append(cells, cell{Text: dash})
						continue
					}
					c := x.Checks[i]
					text := fmt.Sprintf("%.3f", c.Value)
					if !c.Pass {
						text += " FAIL"
					}
					cells = append(cells, cell{Text: text, Bad: !c.Pass})
				}
				for _, c := range x.Checks {
					if !c.Pass {
						failed = append(failed, c.Name)
					}
				}
				cells = append(cells, cell{Text: strings.Join(failed, ", "), Bad: len(failed) > 0})
				t.Rows = append(t.Rows, row{Cells: cells})
			}
		}
	}
	if len(t.Rows) == 0 {
		return table{}
	}
	return t
}

// faultsTable lists every run during which the server failed: its
// outages, figures that are the driver's own counts and why, too many
// failed transactions; it is empty when there is none.
func (v *view) faultsTable() table {
	t := table{ID: "faults", Title: "Runs the server failed during",
		Note: "Outages are stretches in which virtual users had lost their connection and were reconnecting " +
			"(a crash restart, a failover); stalls are stretches of 2 s or more in which no transaction completed " +
			"(a frozen server, a hung disk or network). After a restart, or when the counters could not be read, TPM and NOPM " +
			"are the driver's own counts. A run whose server was down when its window ended, or whose stalls covered more than the " +
			"allowed share of its window (10% unless --max-stall), or whose managed server exited, failed: it is not counted, " +
			"nor is a run with more failed transactions than allowed.",
		Header: []string{"Profile", "VUs", "Run", "NOPM", "TPM", "What happened"},
		Right:  []bool{false, true, true, true, true, false}}
	for _, p := range v.profiles {
		for _, s := range p.Steps {
			for _, r := range s.Repeats {
				if len(r.Faults) == 0 {
					continue
				}
				cells := texts(p.Name, strconv.Itoa(s.VUs), strconv.FormatInt(r.RunID, 10), formatNumber(r.NOPM), formatNumber(r.TPM),
					strings.Join(r.Faults, "; "))
				cells[5].Warn = true
				if r.ServerFailed {
					cells[5].Text = "FAILED, not counted: " + cells[5].Text
					cells[5].Bad = true
				}
				t.Rows = append(t.Rows, row{Cells: cells})
			}
		}
	}
	if len(t.Rows) == 0 {
		return table{}
	}
	return t
}

func (v *view) verdictTable() table {
	t := table{ID: "verdicts", Title: "Peaks and knees",
		Note:   profile.Rule,
		Header: []string{"Profile", "Peak NOPM", "at VUs", "Knee at VUs", "Shape", "Verdict"},
		Right:  []bool{false, true, true, true, false, false}}
	for _, p := range v.profiles {
		peak, at, knee := dash, dash, dash
		if p.Verdict.PeakVUs > 0 {
			peak, at = formatNumber(p.Verdict.PeakNOPM), strconv.Itoa(p.Verdict.PeakVUs)
		}
		if p.Verdict.KneeVUs > 0 {
			knee = strconv.Itoa(p.Verdict.KneeVUs)
		}
		shape := string(p.Verdict.Shape)
		if shape == "" {
			shape = dash
		}
		t.Rows = append(t.Rows, row{Cells: texts(p.Name, peak, at, knee, shape, p.Verdict.Reason)})
	}
	return t
}

// comparisonTable lists, per step, each profile's mean NOPM and TPM and
// the ratio of every other profile to the first. It is empty with fewer
// than two profiles.
func (v *view) comparisonTable() table {
	if len(v.profiles) < 2 {
		return table{}
	}
	base := v.profiles[0].Name
	t := table{ID: "comparison", Title: "Comparison with " + base,
		Note: "Ratios of mean NOPM and TPM to " + base + " with their 95% confidence interval (on the log scale, Welch degrees of freedom). " +
			"\"not significant\": the interval contains 1, so the difference may be noise; " +
			"\"too few runs\": a side has fewer than 3 runs, and no interval is drawn from fewer.",
		Header: []string{"VUs"}, Right: []bool{true}}
	for _, metric := range []string{"NOPM", "TPM"} {
		for i, p := range v.profiles {
			t.Header = append(t.Header, p.Name+" "+metric)
			t.Right = append(t.Right, true)
			if i > 0 {
				t.Header = append(t.Header, p.Name+"/"+base+" "+metric)
				t.Right = append(t.Right, true)
			}
		}
	}
	for _, vus := range v.vus {
		cells := texts(strconv.Itoa(vus))
		for _, metric := range []string{"NOPM", "TPM"} {
			for i := range v.profiles {
				mean := dash
				if s, ok := v.step(i, vus); ok {
					sum := s.NOPM
					if metric == "TPM" {
						sum = s.TPM
					}
					if sum.N > 0 {
						mean = formatNumber(sum.Mean)
					}
				}
				cells = append(cells, cell{Text: mean})
				if i == 0 {
					continue
				}
				rn, rt, ok := v.ratios(i, vus)
				r := rn
				if metric == "TPM" {
					r = rt
				}
				if !ok {
					cells = append(cells, cell{Text: dash})
					continue
				}
				cells = append(cells, cell{Text: formatRatio(r), Dim: r.Defined && !r.Significant})
			}
		}
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// stepTable lists the per-step figures of profile pi.
func (v *view) stepTable(pi int) table {
	p := v.profiles[pi]
	t := table{ID: fmt.Sprintf("steps-%d", pi), Title: "Per-step figures: " + p.Name,
		Note: fmt.Sprintf("Mean over the complete repeats; sd is the sample standard deviation, CV = sd/mean, "+
			"95%% CI of the mean by Student's t on the log scale. High variation: CV above %s. No interval is drawn from fewer than %d runs.",
			formatPercent(profile.DefaultHighVariationCV), profile.MinRepeats) + stoppingNote(p.Profile),
		Header: []string{"VUs", "n",
			"NOPM", "NOPM sd", "NOPM min–max", "NOPM CV", "NOPM 95% CI",
			"TPM", "TPM sd", "TPM min–max", "TPM CV", "TPM 95% CI",
			"TPM/VU", "TPM/VU 95% CI", "Flags"},
		Right: []bool{true, true, true, true, true, true, true, true, true, true, true, true, true, true, false}}
	for _, s := range p.Steps {
		n, c, pv := formatSummary(s.NOPM), formatSummary(s.TPM), formatSummary(s.TPMPerVU)
		var flags []string
		if s.NOPM.HighVariation {
			flags = append(flags, "high NOPM variation")
		}
		if s.TPM.HighVariation {
			flags = append(flags, "high TPM variation")
		}
		partial, failures, suspect, counted, contaminated, dirtyCounted := 0, 0, 0, 0, 0, 0
		for _, r := range s.Repeats {
			if r.Contaminated {
				contaminated++
				if r.Counted {
					dirtyCounted++
				}
			}
			if r.Partial {
				partial++
			}
			if r.Failures {
				failures++
			}
			if r.Suspect {
				suspect++
				if r.Counted {
					counted++
				}
			}
		}
		if partial > 0 {
			flags = append(flags, fmt.Sprintf("%d of %d repeats partial", partial, len(s.Repeats)))
		}
		if failures > 0 {
			flags = append(flags, fmt.Sprintf("%d of %d repeats with too many failed transactions", failures, len(s.Repeats)))
		}
		if suspect > 0 {
			what := "left out"
			if counted > 0 {
				what = "counted"
			}
			flags = append(flags, fmt.Sprintf("%d of %d repeats suspect (%s)", suspect, len(s.Repeats), what))
		}
		if contaminated > 0 {
			what := "left out"
			if dirtyCounted > 0 {
				what = "counted"
			}
			flags = append(flags, fmt.Sprintf("%d of %d repeats contaminated (%s)", contaminated, len(s.Repeats), what))
		}
		switch {
		case s.NOPM.N == 1:
			flags = append(flags, "single run: "+tooFewNote)
		case s.NOPM.N > 0 && !s.NOPM.HasCI():
			flags = append(flags, fmt.Sprintf("%d runs: %s", s.NOPM.N, tooFewNote))
		}
		warn := len(flags) > 0
		if stop, ok := p.StopAt(s.VUs); ok {
			// A budget that ended short of the precision is a warning;
			// a precision reached is not.
			flags = append(flags, "repeat auto: "+stop.Text(p.Stopping.Rule.Precision))
			warn = warn || stop.Reason != profile.StopPrecision
		}
		cells := texts(strconv.Itoa(s.VUs), strconv.Itoa(s.NOPM.N),
			n.Mean, n.SD, n.Range, n.CV, n.CI,
			c.Mean, c.SD, c.Range, c.CV, c.CI,
			pv.Mean, pv.CI, strings.Join(flags, "; "))
		cells[5].Warn = s.NOPM.HighVariation
		cells[10].Warn = s.TPM.HighVariation
		cells[14].Warn = warn
		cells[14].Bad = suspect > 0
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// latencyTable lists p95 and p99 latency per transaction kind of
// profile pi; it is empty when no step has latency figures.
func (v *view) latencyTable(pi int) table {
	p := v.profiles[pi]
	var kinds []string
	for _, k := range v.kinds {
		for _, s := range p.Steps {
			if _, ok := s.Latency[k]; ok {
				kinds = append(kinds, k)
				break
			}
		}
	}
	if len(kinds) == 0 {
		return table{}
	}
	t := table{ID: fmt.Sprintf("latency-%d", pi), Title: "Latency (ms): " + p.Name, Header: []string{"VUs"}, Right: []bool{true}}
	for _, k := range kinds {
		t.Header = append(t.Header, k+" p95", k+" p99")
		t.Right = append(t.Right, true, true)
	}
	for _, s := range p.Steps {
		cells := texts(strconv.Itoa(s.VUs))
		for _, k := range kinds {
			l, ok := s.Latency[k]
			if !ok {
				cells = append(cells, cell{Text: dash}, cell{Text: dash})
				continue
			}
			cells = append(cells, cell{Text: formatMillis(l.P95Millis)}, cell{Text: formatMillis(l.P99Millis)})
		}
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// contextTable lists every context key with each profile's value; keys
// whose values differ are marked.
func (v *view) contextTable() table {
	if len(v.ctxKeys) == 0 {
		return table{}
	}
	t := table{ID: "context", Title: "Context", Header: []string{"Key"}, Right: []bool{false}}
	if len(v.profiles) > 1 {
		t.Note = fmt.Sprintf("%d of %d keys differ between the profiles (marked ≠).", len(v.diff), len(v.ctxKeys))
	}
	for _, p := range v.profiles {
		t.Header = append(t.Header, p.Name)
		t.Right = append(t.Right, false)
	}
	multi := len(v.profiles) > 1
	if multi {
		t.Header = append(t.Header, "Differs")
		t.Right = append(t.Right, false)
	}
	for _, k := range v.ctxKeys {
		cells := texts(k)
		for _, p := range v.profiles {
			val, ok := p.Context[k]
			if !ok {
				val = dash
			}
			cells = append(cells, cell{Text: val})
		}
		if multi {
			mark := ""
			if v.diff[k] {
				mark = "≠"
			}
			cells = append(cells, cell{Text: mark})
		}
		t.Rows = append(t.Rows, row{Cells: cells, Diff: v.diff[k]})
	}
	return t
}

// tables returns every table in report order, leaving out empty ones.
func (v *view) tables() []table {
	var all []table
	if len(v.profiles) > 0 {
		all = append(all, v.profilesTable(), v.tpccTable(), v.verdictTable(), v.suspectTable(), v.contaminatedTable(), v.faultsTable(), v.comparisonTable())
	}
	all = append(all, v.monitorTable())
	for i := range v.profiles {
		all = append(all, v.stepTable(i))
	}
	for i := range v.profiles {
		all = append(all, v.latencyTable(i))
	}
	for i := range v.profiles {
		all = append(all, v.hostTable(i))
	}
	all = append(all, v.contextTable())
	return slices.DeleteFunc(all, func(t table) bool { return len(t.Header) == 0 })
}
