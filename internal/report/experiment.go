package report

import (
	"fmt"
	"strconv"

	"github.com/oltplab/oltplab/internal/profile"
)

// experimentLead is the sentence under an experiment report's title.
func experimentLead(e *Experiment) string {
	s := fmt.Sprintf("Experiment %d (%s): %d target", e.ID, e.Status, len(e.Targets))
	if len(e.Targets) != 1 {
		s += "s"
	}
	s += fmt.Sprintf(", %d step", len(e.Sections))
	if len(e.Sections) != 1 {
		s += "s"
	}
	if e.Baseline != "" {
		s += "; ratios are taken against the baseline target, " + e.Baseline
	}
	s += "."
	if e.Description != "" {
		s += " " + e.Description
	}
	return s
}

// experimentIntro is the tables before the steps: the targets and the
// schedule with each (target, step)'s state and headline.
func experimentIntro(e *Experiment) []table {
	targets := table{ID: "targets", Title: "Targets",
		Note:   "What each target is. The baseline is marked; every section lists it first.",
		Header: []string{"Target", "Database", "Dialect", "Baseline"},
		Right:  []bool{false, false, false, false}}
	for _, t := range e.Targets {
		mark := ""
		if t.Name == e.Baseline {
			mark = "baseline"
		}
		targets.Rows = append(targets.Rows, row{Cells: texts(t.Name, redactTarget(t.Display), t.Dialect, mark)})
	}
	sched := table{ID: "schedule", Title: "Schedule",
		Note:   "Each step on each target, in the order they ran. Attempts above 1: the experiment was resumed (or the step retried); runs its interrupted attempts left do not count.",
		Header: []string{"#", "Target", "Step", "State", "Attempts", "Result"},
		Right:  []bool{true, false, false, false, true, false}}
	for _, s := range e.Schedule {
		target := s.Target
		if target == "" {
			target = "all targets"
		}
		result := s.Headline
		if s.Error != "" {
			result = s.Error
		}
		cells := texts(strconv.Itoa(s.Seq), target, s.Step, s.State, strconv.Itoa(s.Attempts), result)
		cells[3].Warn = s.State != "done"
		sched.Rows = append(sched.Rows, row{Cells: cells})
	}
	return []table{targets, sched}
}

// experimentSection renders one step of the plan: its profiles as the
// profile report draws them (ids prefixed by the step), then its own
// tables.
func experimentSection(i int, sec Section) htmlSection {
	prefix := "step-" + strconv.Itoa(i+1) + "-"
	var out htmlSection
	if len(sec.Profiles) > 0 {
		out = profileSection(newView(Input{Profiles: sec.Profiles}), prefix, sec.Title, sec.Note, true)
	} else {
		out = htmlSection{ID: prefix, Title: sec.Title, Note: sec.Note, Sub: true}
	}
	out.Rest = append(out.Rest, sectionTables(sec, prefix)...)
	for ci, tc := range sec.Charts {
		out.TimeCharts = append(out.TimeCharts, timeChart(prefix+"chart-time-"+strconv.Itoa(ci+1), tc))
	}
	out.TimeCharts = drawable(out.TimeCharts)
	return out
}

// sectionTables converts a section's own tables.
func sectionTables(sec Section, prefix string) []table {
	var out []table
	for ti, t := range sec.Tables {
		tb := table{ID: prefix + "table-" + strconv.Itoa(ti+1), Sub: true, Title: t.Title, Note: t.Note, Header: t.Header}
		tb.Right = make([]bool, len(t.Header))
		copy(tb.Right, t.Right)
		for _, r := range t.Rows {
			tb.Rows = append(tb.Rows, row{Cells: texts(r...)})
		}
		out = append(out, tb)
	}
	return out
}

// experimentOutro is the table of what was recorded differently about
// the targets: only the keys whose values differ.
func experimentOutro(e *Experiment) []table {
	if len(e.Targets) < 2 {
		return nil
	}
	ctxs := make([]map[string]string, len(e.Targets))
	for i, t := range e.Targets {
		ctxs[i] = t.Context
	}
	all := profile.Keys(ctxs)
	diff := profile.DiffKeys(ctxs)
	t := table{ID: "differences", Title: "What differs between the targets",
		Note: fmt.Sprintf("Only what was recorded differently about the targets: %d of %d recorded keys differ (instance settings, storage, database settings, host); "+
			"\"—\" where a target has no such key.", len(diff), len(all)),
		Header: []string{"Key"}, Right: []bool{false}}
	for _, tg := range e.Targets {
		t.Header = append(t.Header, tg.Name)
		t.Right = append(t.Right, false)
	}
	for _, k := range diff {
		cells := texts(k)
		for _, c := range ctxs {
			val, ok := c[k]
			if !ok || val == "" {
				val = dash
			}
			cells = append(cells, cell{Text: val})
		}
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	if len(diff) == 0 {
		t.Note = "Nothing recorded differs between the targets."
	}
	return []table{t}
}
