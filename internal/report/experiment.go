package report

import (
	"fmt"
	"strconv"
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
