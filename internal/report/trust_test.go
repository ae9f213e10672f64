package report

import (
	"bytes"
	"strings"
	"testing"
)

// trustFixture is the fixture with a third profile whose 4-VU step has
// one run whose server failed (an outage open at the window's end), one
// contaminated run and nothing else; who used the CPU is known for its
// steps, and its per-second series has the outage to shade.
func trustFixture() Input {
	in := fixture()
	f := func(v float64) *float64 { return &v }
	p := Profile{ID: 3, Label: "busy", Target: "postgres://127.0.0.1/tpcc", Dialect: "postgres", Mode: "tproc-c (no keying or think time)"}
	p.Steps = append(p.Steps, NewStep(1, []Repeat{{RunID: 301, NOPM: 9000, TPM: 21000}, {RunID: 302, NOPM: 9100, TPM: 21100}, {RunID: 303, NOPM: 9050, TPM: 21050}}, nil))
	p.Steps = append(p.Steps, NewStep(4, []Repeat{
		{RunID: 304, NOPM: 22247, TPM: 51000, Partial: true, ServerFailed: true,
			Faults: []string{"outage 1: 12.2 s from 17.8 s into the window, 4 connection(s) lost, still down when the window ended",
				"the server was down when the measured window ended (outage 1, from 17.8 s into the measured window, 4 connection(s) lost)"}},
		{RunID: 305, NOPM: 37636, TPM: 86000, Contaminated: true,
			Interference: []string{"foreign CPU 48% of the host's 2 cores (0.96 cores that neither the database server nor oltplab used), more than the 10% allowed (--max-foreign-cpu)"}},
	}, nil))
	p.Steps[0].CPU = &CPUShares{Runs: 3, HostCores: 2, ServerCores: f(0.9), OltplabCores: 0.2, ForeignCores: f(0.1), IdleCores: 0.8,
		ServerSource: "the managed instance's processes"}
	p.Steps[1].CPU = &CPUShares{Runs: 2, HostCores: 2, ServerCores: f(0.7), OltplabCores: 0.3, ForeignCores: f(0.96), IdleCores: 0.04}
	p.Verdict.Reason = "no verdict"
	p.Series = fixtureSeries(4, 304)
	p.Series.Faults = []Span{{Label: "outage 1", From: 17.8, To: 30, Kind: SpanFault}}
	in.Profiles = append(in.Profiles, p)
	return in
}

// TestTrustShown: a run whose server failed and a contaminated run are
// listed apart with why, left out of the step's figures; the step left
// without a counted run is named; who used the CPU is drawn as stacked
// bars with the foreign share; the outage is shaded on the per-second
// charts; the Method part explains statuses, foreign CPU and the limit.
func TestTrustShown(t *testing.T) {
	in := trustFixture()
	busy := in.Profiles[2]
	if s := busy.Steps[1]; s.NOPM.N != 0 {
		t.Errorf("4-VU step of a failed and a contaminated run: %d runs counted, want none", s.NOPM.N)
	}
	with := NewStepWith(4, []Repeat{busy.Steps[1].Repeats[0], busy.Steps[1].Repeats[1]}, nil, Include{Contaminated: true})
	if with.NOPM.N != 1 || with.NOPM.Mean != 37636 || !with.Repeats[1].Counted {
		t.Errorf("--include-contaminated: %d runs counted (mean %g), want the contaminated one, marked counted", with.NOPM.N, with.NOPM.Mean)
	}

	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	var h bytes.Buffer
	if err := HTML(&h, in); err != nil {
		t.Fatal(err)
	}
	for _, out := range []struct {
		name string
		text string
		want []string
	}{
		{"markdown", md.String(), []string{"Contaminated runs", "foreign CPU 48% of the host's 2 cores", "FAILED, not counted: outage 1",
			"1 of 2 repeats contaminated (left out)"}},
		{"html", h.String(), []string{"Contaminated runs", "FAILED, not counted: outage 1", `class="bars cpushare"`,
			`data-series="foreign (neither)"`, "foreign 48%", `"kind":"fault"`, "Shaded red: the run&#39;s outages and stalls"}},
	} {
		for _, w := range out.want {
			if !strings.Contains(out.text, w) {
				t.Errorf("%s report: want %q", out.name, w)
			}
		}
	}

	// An experiment's summary names the step without a counted run and
	// lists the outage; its Method part explains the rules.
	ex := experimentFixture()
	sec := &ex.Experiment.Sections[1]
	sec.Profiles = append(sec.Profiles, busy)
	var emd bytes.Buffer
	if err := Markdown(&emd, ex); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"CONTAMINATED: busy at 4 VUs has no run that counts (1 contaminated, 1 failed of 2)",
		"Run 304 (busy, 4 VUs): outage 1: 12.2 s from 17.8 s into the window",
		"FAILED, not counted",
		"Foreign CPU: every second",
		"Contamination: a run whose foreign CPU",
		"Statuses: a run is ok",
		"busy: 1 of 5 runs contaminated, listed under Contaminated runs and left out.",
	} {
		if !strings.Contains(emd.String(), w) {
			t.Errorf("experiment report: want %q", w)
		}
	}
	// Counted as asked, the summary says so rather than "left out".
	r := &sec.Profiles[len(sec.Profiles)-1].Steps[1].Repeats[1]
	r.Counted = true
	emd.Reset()
	if err := Markdown(&emd, ex); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(emd.String(), "busy: 1 of 5 runs contaminated, listed under Contaminated runs and counted as asked (--include-contaminated)") {
		t.Errorf("experiment report with the contaminated run counted: want it said")
	}
}
