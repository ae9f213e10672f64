package report

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withFindings adds to a study what the backup and neighbours step kinds
// state for the summary (internal/experiment writes them from what they
// stored), and the plan's question.
func withFindings(e *Experiment) {
	e.Question = "Does the SATA tier keep up with NVMe, and what does a neighbour's backup cost its victims?"
	v := func(x float64) *float64 { return &x }
	for i := range e.Sections {
		sec := &e.Sections[i]
		switch sec.Kind {
		case "backup":
			sec.Findings = []string{"Backup: nvme (the baseline) backs up in 265.0 s at 593.0 MB/s over 3 cycle(s).",
				"Backup: sata backs up in 512.0 s at 307.0 MB/s over 3 cycle(s), 1.93× (95% CI 1.70–2.19) the time of nvme."}
			sec.Answers = []Answer{{Target: "nvme", Text: "backs up in 265.0 s"}, {Target: "sata", Text: "backs up in 512.0 s (1.93× nvme's time)"}}
			sec.Bars = []BarChart{{Title: "Backup and restore time per target (s)", YLabel: "seconds", Categories: []string{"backup", "restore"},
				Series: []BarSeries{{Label: "nvme", Values: []*float64{v(265), v(120)}, Lo: []*float64{v(250), v(110)}, Hi: []*float64{v(280), v(130)}},
					{Label: "sata", Values: []*float64{v(512), v(240)}, Lo: []*float64{v(480), v(220)}, Hi: []*float64{v(545), v(260)}}}}}
		case "neighbours":
			sec.Findings = []string{"Noisy neighbours: while hdd's backups ran, victim nvme lost 51.7% of its NOPM against the seconds between backups (95% CI 22.9% to 73.2%).",
				"Against the baseline phase, where the noisy instances ran the load too, nvme gained 111.4% of its NOPM; its 95% interval, -666.0% to -11.7%, is too wide to say how much: a negative loss, the victim gained."}
			sec.Answers = []Answer{{Target: "nvme", Text: "lost 51.7% of its NOPM while the neighbour's backups ran"},
				{Target: "hdd", Text: "is the noisy neighbour, its backups 12.5 s on average"}}
		}
	}
}

// backupNeighboursStudy is a plan with a backup and a neighbours step and
// no profile step.
func backupNeighboursStudy() *Experiment {
	e := experimentFixture().Experiment
	var secs []Section
	for _, s := range e.Sections {
		if s.Kind == "backup" || s.Kind == "neighbours" {
			secs = append(secs, s)
		}
	}
	e.Sections, e.Cost = secs, nil
	withFindings(e)
	return e
}

// summaryPart is the HTML of the study report's summary part.
func summaryPart(t *testing.T, e *Experiment) string {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, Input{Experiment: e}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	start := strings.Index(page, `<section id="summary" class="part">`)
	if start < 0 {
		t.Fatalf("the report has no summary part")
	}
	end := strings.Index(page[start+1:], `<section id="system" class="part">`)
	if end < 0 {
		t.Fatalf("no part follows the summary")
	}
	return html.UnescapeString(page[start : start+1+end])
}

// TestSummaryStatesEveryStep: the summary opens the report of a study
// with a profile step and of one with only a backup and a neighbours
// step (issue 28: that one went from the title straight to "System
// under test"), and states the question, an answer for each target,
// every step's findings (the victims while the backups ran before their
// loss against the baseline), a headline chart and, when priced, the
// cost table.
func TestSummaryStatesEveryStep(t *testing.T) {
	full := experimentFixture().Experiment
	withFindings(full)
	for _, c := range []struct {
		name string
		e    *Experiment
		want []string
	}{
		{"profile, backup and neighbours", full, []string{
			"The question", full.Question,
			"nvme (the baseline) peaks at 36,867 NOPM with 8 VUs; lost 51.7% of its NOPM while the neighbour's backups ran; backs up in 265.0 s; costs 924.28 USD per 1,000 NOPM at its peak.",
			"sata gives 0.58× the NOPM of nvme at 8 VUs",
			"sata backs up in 512.0 s at 307.0 MB/s over 3 cycle(s), 1.93×",
			"hdd is the noisy neighbour",
			"sata gives 0.58× the NOPM of nvme at 8 VUs (too few runs for a confidence interval)",
			`id="summary-chart"`, `id="summary-cost"`}},
		{"backup and neighbours only", backupNeighboursStudy(), []string{
			"The question", "nvme (the baseline) lost 51.7% of its NOPM while the neighbour's backups ran; backs up in 265.0 s.",
			"Backup: sata backs up in 512.0 s", "victim nvme lost 51.7%", `id="summary-chart-step-2"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := summaryPart(t, c.e)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the summary lacks %q", w)
				}
			}
			// The comparison the neighbours step exists for comes first.
			if i, j := strings.Index(got, "while hdd's backups ran"), strings.Index(got, "Against the baseline phase"); i < 0 || j < i {
				t.Errorf("the victims while the backups ran (at %d) do not come before their loss against the baseline (at %d)", i, j)
			}
		})
	}
}

// TestExecutiveViewFitsFirstPage prints the summary part of a study
// report (question, answers, every step's findings, the headline chart
// and the cost table) to PDF with Chromium, the other parts removed: it
// fits on the first page. The probe sees the headline chart's bars, and
// those of the backup part (time per target with intervals) and of the
// cost part (cost per 1,000 NOPM per target).
func TestExecutiveViewFitsFirstPage(t *testing.T) {
	chromium := findChromium(t)
	e := experimentFixture().Experiment
	withFindings(e)
	var buf bytes.Buffer
	if err := HTML(&buf, Input{Experiment: e}); err != nil {
		t.Fatal(err)
	}
	_, got := checkInBrowser(t, Input{Experiment: e}, chartIDs(t, buf.String()), map[string]int{"step-3-chart-time-1": 2})
	for _, p := range got.Parts {
		if p.ID != "summary" {
			continue
		}
		if len(p.Bars) != 1 || p.Bars[0].ID != "summary-chart" || p.Bars[0].Series["peak NOPM"] != 2 || p.Bars[0].Whiskers != 2 {
			t.Errorf("summary bars: %+v, want the headline chart: 2 peaks, each with its interval", p.Bars)
		}
		if p.Tables != 1 {
			t.Errorf("summary tables: %d, want the cost table", p.Tables)
		}
	}
	// The charts of the backup and cost parts: backup and restore time per
	// target with intervals, cost per 1,000 NOPM per target.
	drawn := map[string]int{}
	whiskers := map[string]int{}
	for _, p := range got.Parts {
		for _, b := range p.Bars {
			for _, n := range b.Series {
				drawn[p.ID+"/"+b.ID] += n
			}
			whiskers[p.ID+"/"+b.ID] = b.Whiskers
		}
	}
	if n, w := drawn["backup/step-4-chart-bars-1"], whiskers["backup/step-4-chart-bars-1"]; n != 4 || w != 4 {
		t.Errorf("backup and restore time per target: %d bars, %d whiskers, want 4 and 4 (2 targets × backup, restore)", n, w)
	}
	if n := drawn["cost/cost-chart"]; n != 2 {
		t.Errorf("cost per 1,000 NOPM: %d bars, want 2 (the priced targets)", n)
	}
	onlySummary := strings.Replace(buf.String(), "</body>",
		`<script>document.querySelectorAll("section.part:not(#summary)").forEach(function (s) { s.remove(); });</script></body>`, 1)
	if n := printedPages(t, chromium, onlySummary); n != 1 {
		t.Errorf("the summary part printed on %d pages, want 1", n)
	}
	// The probe of the page count: the whole report takes many pages.
	if n := printedPages(t, chromium, buf.String()); n < 5 {
		t.Errorf("the whole report printed on %d pages, want many", n)
	}
}

// chartIDs lists the uPlot charts of a rendered page in order.
func chartIDs(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`<div class="chart" id="([^"]+)">`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// printedPages prints page to PDF with Chromium and counts its pages.
func printedPages(t *testing.T, chromium, page string) int {
	t.Helper()
	dir := t.TempDir()
	file, pdf := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--virtual-time-budget=3000", "--no-pdf-header-footer",
		"--print-to-pdf="+pdf, "file://"+file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("print to pdf: %v\n%s", err, tail(string(out), 3000))
	}
	b, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	return len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(b, -1))
}
