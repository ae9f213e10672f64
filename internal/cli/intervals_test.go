package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/summary"
)

func noColour(s string) string { return s }

// TestTwoRepeatIntervals: with 2 repeats a step's interval was huge and
// crossed zero (observed: "-29,445..119,507", then "[−29,445, 119,507]";
// ratio "[-1.20-26.15]"). From fewer than 3 runs no interval is drawn:
// the output says "too few runs" and recommends 3 or more; no figure is
// negative.
func TestTwoRepeatIntervals(t *testing.T) {
	p := report.Profile{ID: 1, Label: "two", Target: "sqlite:x.db"}
	p.Steps = []report.Step{
		report.NewStepWith(1, []report.Repeat{{RunID: 1, NOPM: 39170, TPM: 90000}, {RunID: 2, NOPM: 50892, TPM: 116000}}, nil, report.Include{}),
		report.NewStepWith(2, []report.Repeat{{RunID: 3, NOPM: 60000, TPM: 130000}, {RunID: 4, NOPM: 61000, TPM: 133000},
			{RunID: 5, NOPM: 59000, TPM: 128000}}, nil, report.Include{}),
	}
	var buf bytes.Buffer
	printProfileTable(&buf, p, noColour)
	out := buf.String()
	if strings.Contains(out, "−") || strings.Contains(out, "29,4") {
		t.Errorf("2-repeat NOPM interval still drawn (below zero):\n%s", out)
	}
	if strings.Contains(out, "..") {
		t.Errorf("interval still written lo..hi:\n%s", out)
	}
	if !strings.Contains(out, "too few runs") || !strings.Contains(out, "n=2: no interval") || !strings.Contains(out, "use --repeat 3 or more") {
		t.Errorf("no too-few note for 2 repeats:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "2 ") {
			if strings.Contains(line, "too few") {
				t.Errorf("the 3-repeat step is flagged too few: %q", line)
			}
			if !regexp.MustCompile(`\[\d\d,\d\d\d, \d\d,\d\d\d\]`).MatchString(line) {
				t.Errorf("the 3-repeat step has no interval [lo, hi]: %q", line)
			}
		}
	}

	num := profile.Summarize([]float64{120, 10})
	den := profile.Summarize([]float64{50, 50.5})
	got := ratioText(profile.Ratio(num, den))
	if got != "1.29x (too few runs: n<3 a side)" {
		t.Errorf("ratioText = %q, want 1.29x (too few runs: n<3 a side)", got)
	}
}

// TestRepeatHelpRecommendsThree: run's help recommends 3 or more repeats.
func TestRepeatHelpRecommendsThree(t *testing.T) {
	r := oltplab(t, storeEnv(t), "run", "--help")
	if !strings.Contains(r.out, "3 or more") {
		t.Errorf("run --help does not recommend 3 or more repeats:\n%s", r.out)
	}
}

// TestQuickstartHelpDefaults: quickstart --help listed run's defaults
// (5m0s, 2m0s, "4") instead of its own (10s, 3s, 1,2,4).
func TestQuickstartHelpDefaults(t *testing.T) {
	r := oltplab(t, storeEnv(t), "quickstart", "--help")
	for _, want := range []string{"(default 10s)", "(default 3s)", `(default "1,2,4")`, "(default 5s)"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("quickstart --help lacks %s", want)
		}
	}
	for _, bad := range []string{"5m0s", "2m0s", `(default "4")`} {
		if strings.Contains(r.out, bad) {
			t.Errorf("quickstart --help shows run's default %s", bad)
		}
	}
}

// TestMonitorSummaryRemote: host figures of a run on a remote database are
// labelled as the load generator's.
func TestMonitorSummaryRemote(t *testing.T) {
	var out bytes.Buffer
	a := &app{stdio: Stdio{Out: &out}, env: Env{}}
	a.printMonitorSummary(summary.Monitor{HostRole: "load generator only", DatabaseAddress: "10.0.0.5"})
	if !strings.Contains(out.String(), "load generator host (this machine) during the window") ||
		!strings.Contains(out.String(), "the database at 10.0.0.5 runs on another machine") {
		t.Errorf("remote host figures not labelled:\n%s", out.String())
	}
}

// TestStepWithoutCountedRun: a step whose only run is contaminated (left
// out) printed "NOPM mean 0", which reads as no throughput; it prints no
// figure and says no run counts, and counted on request it shows the
// run's figures.
func TestStepWithoutCountedRun(t *testing.T) {
	reps := []report.Repeat{{RunID: 1, NOPM: 15227, TPM: 35000, Contaminated: true}}
	for _, c := range []struct {
		inc       report.Include
		want, not string
	}{
		{report.Include{}, "no run counts", "15,227"},
		{report.Include{Contaminated: true}, "15,227", "no run counts"},
	} {
		p := report.Profile{ID: 1, Label: "busy", Target: "sqlite:x.db", Steps: []report.Step{report.NewStepWith(1, reps, nil, c.inc)}}
		var buf bytes.Buffer
		printProfileTable(&buf, p, noColour)
		out := buf.String()
		row := regexp.MustCompile(`(?m)^\s+1\s+\d.*$`).FindString(out)
		if !strings.Contains(row, c.want) || strings.Contains(row, c.not) {
			t.Errorf("include %+v: want %q and not %q in the step's row %q of:\n%s", c.inc, c.want, c.not, row, out)
		}
		if c.inc == (report.Include{}) && regexp.MustCompile(`^\s+1\s+0\s+0\s`).MatchString(row) {
			t.Errorf("a step without a counted run prints a mean of 0: %q", row)
		}
	}
}
