package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/testenv"
)

// probeScript is put at the very start of <head> of the rendered report
// before it is opened: it records script errors, console.error calls and
// Content-Security-Policy violations (every blocked request is one),
// and once the page has loaded it checks every chart canvas and writes
// its findings as JSON into <pre id="probe-result">, where --dump-dom
// shows them.
const probeScript = `<script>
(function () {
  var errors = [], violations = [];
  window.addEventListener("error", function (e) { errors.push("error: " + e.message + " at " + e.filename + ":" + e.lineno); });
  window.addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + e.reason); });
  var origError = console.error;
  console.error = function () { errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); return origError.apply(console, arguments); };
  document.addEventListener("securitypolicyviolation", function (e) { violations.push(e.violatedDirective + " " + e.blockedURI); });
  function rgb(hex) { return [1, 3, 5].map(function (i) { return parseInt(hex.substr(i, 2), 16); }); }
  window.addEventListener("load", function () {
    var out = { charts: [], errors: errors, violations: violations, resources: [], parts: [], legends: [] };
    try {
      var specs = JSON.parse(document.getElementById("oltplab-charts").textContent);
      specs.forEach(function (spec) {
        var el = document.getElementById(spec.id);
        var cv = el && el.querySelector("canvas");
        var r = { id: spec.id, width: 0, height: 0, inked: 0, series: [] };
        out.charts.push(r);
        if (!cv) { return; }
        r.width = cv.width; r.height = cv.height;
        if (!cv.width || !cv.height) { return; }
        var px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
        for (var i = 3; i < px.length; i += 4) { if (px[i] !== 0) { r.inked++; } }
        // Every value series must have left pixels of exactly its colour
        // (its filled point markers).
        spec.series.forEach(function (s) {
          if (s.role !== "value" || !s.values.some(function (v) { return v !== null; })) { return; }
          var c = rgb(s.color), n = 0;
          for (var i = 0; i < px.length; i += 4) {
            if (px[i + 3] === 255 && Math.abs(px[i] - c[0]) <= 2 && Math.abs(px[i + 1] - c[1]) <= 2 && Math.abs(px[i + 2] - c[2]) <= 2) { n++; }
          }
          r.series.push({ label: s.label, pixels: n });
        });
        // Every span colour (phase and event edges) must be on the canvas.
        var spanColors = {};
        (spec.spans || []).forEach(function (s) { spanColors[s.color] = true; });
        r.spans = Object.keys(spanColors).map(function (hex) {
          var c = rgb(hex), n = 0;
          for (var i = 0; i < px.length; i += 4) {
            if (px[i + 3] === 255 && px[i] === c[0] && px[i + 1] === c[1] && px[i + 2] === c[2]) { n++; }
          }
          return { color: hex, pixels: n };
        });
      });
      out.resources = performance.getEntriesByType("resource").map(function (e) { return e.name; });
      // The parts of a study report: what each drew.
      document.querySelectorAll("section.part").forEach(function (sec) {
        var part = { id: sec.id, canvases: 0, tables: sec.querySelectorAll("table").length, bars: [] };
        sec.querySelectorAll(".chart canvas").forEach(function (cv) { if (cv.width > 0 && cv.height > 0) { part.canvases++; } });
        sec.querySelectorAll("svg.bars").forEach(function (svg) {
          var b = { id: svg.id, width: svg.getBoundingClientRect().width, series: {}, missing: svg.querySelectorAll("text.missing").length, whiskers: svg.querySelectorAll("path.ci").length };
          svg.querySelectorAll("rect.bar").forEach(function (r) {
            var box = r.getBoundingClientRect();
            if (box.width > 0 && box.height > 0) { b.series[r.getAttribute("data-series")] = (b.series[r.getAttribute("data-series")] || 0) + 1; }
          });
          part.bars.push(b);
        });
        out.parts.push(part);
      });
      // What a static render shows in the charts' legends.
      document.querySelectorAll(".u-legend").forEach(function (l) { out.legends.push(l.innerText); });
    } catch (e) {
      errors.push("probe: " + e);
    }
    var pre = document.createElement("pre");
    pre.id = "probe-result";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>`

type probeResult struct {
	Charts []struct {
		ID     string `json:"id"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Inked  int    `json:"inked"`
		Series []struct {
			Label  string `json:"label"`
			Pixels int    `json:"pixels"`
		} `json:"series"`
		Spans []struct {
			Color  string `json:"color"`
			Pixels int    `json:"pixels"`
		} `json:"spans"`
	} `json:"charts"`
	Errors     []string `json:"errors"`
	Violations []string `json:"violations"`
	Resources  []string `json:"resources"`
	Parts      []struct {
		ID       string `json:"id"`
		Canvases int    `json:"canvases"`
		Tables   int    `json:"tables"`
		Bars     []struct {
			ID       string         `json:"id"`
			Width    float64        `json:"width"`
			Series   map[string]int `json:"series"`
			Missing  int            `json:"missing"`
			Whiskers int            `json:"whiskers"`
		} `json:"bars"`
	} `json:"parts"`
	Legends []string `json:"legends"`
}

// TestHTMLInBrowser opens the fixture's HTML report from a file in
// headless Chromium and checks that every chart drew every series, that
// no script error or console error occurred and that the page attempted
// no network request.
func TestHTMLInBrowser(t *testing.T) {
	// The host charts and the per-second series are the nvme profile's
	// (index 0); sata has neither.
	checkInBrowser(t, fixture(), []string{"chart-nopm", "chart-tpm", "chart-tpm-per-vu", "chart-ratio", "chart-latency-0", "chart-latency-1",
		"chart-cpu", "chart-disk-latency", "chart-disk-iops", "chart-waits-0",
		"chart-series-0-throughput", "chart-series-0-cpu", "chart-series-0-disk"}, nil)
}

// TestExperimentHTMLInBrowser: an experiment's report is the study
// report, its parts in the studies' order, each present only with data,
// and each drew: the profile curves (with the same step of every target
// overlaid second by second), CPU, device latency and IOPS, wait classes
// against virtual users; the sections of other step kinds in their parts;
// the cost table with its formulas. The legends of a static render show
// no hover placeholders.
func TestExperimentHTMLInBrowser(t *testing.T) {
	var want []string
	for _, id := range []string{"chart-nopm", "chart-tpm", "chart-tpm-per-vu", "chart-ratio", "chart-latency-0", "chart-latency-1",
		"chart-overlay-nopm", "chart-overlay-p99", "chart-overlay-cpu", "chart-overlay-disk",
		"chart-cpu", "chart-disk-latency", "chart-disk-iops", "chart-waits-0"} {
		want = append(want, "s2-"+id)
	}
	// The neighbours step's own time series, with its phases and backups.
	want = append(want, "step-3-chart-time-1")
	page, got := checkInBrowser(t, experimentFixture(), want, map[string]int{"step-3-chart-time-1": 2})
	checkParts(t, got, map[string]int{"summary": 0, "system": 0, "storage": 0, "profiles": 10, "cpu": 1, "devices": 2, "waits": 1,
		"backup": 0, "neighbours": 1, "cost": 0, "method": 0, "appendix": 0})
	for _, s := range []string{`id="cost-table"`, `<ol class="footnotes">`, "sata gives 0.58× the NOPM of nvme at 8 VUs (too few runs for a confidence interval)",
		"Step 4: backup, 3 cycles", `id="appendix-context"`, "instance.id"} {
		if !strings.Contains(page, s) {
			t.Errorf("study report lacks %q", s)
		}
	}
	if strings.Contains(page, fixtureSecret) {
		t.Errorf("experiment report contains the password")
	}
	for _, l := range got.Legends {
		if strings.Contains(l, "—") || strings.Contains(l, "--") || strings.Contains(l, "virtual users") {
			t.Errorf("a static render's legend shows a hover placeholder: %q", l)
		}
	}
	if len(got.Legends) == 0 {
		t.Errorf("probe saw no legend, want one per chart")
	}
}

// TestFewStepsDrawBars: a comparison at two steps is drawn as grouped
// bars (one bar per target and step, whiskers for the intervals), a
// figure a target lacks is written "n/a" in its slot, not dropped, and
// a negative figure is drawn below zero.
func TestFewStepsDrawBars(t *testing.T) {
	in := experimentFixture()
	sec := &in.Experiment.Sections[1]
	for i := range sec.Profiles {
		p := &sec.Profiles[i]
		p.Steps = slices.DeleteFunc(slices.Clone(p.Steps), func(s Step) bool { return s.VUs < 4 })
		p.Series = nil
	}
	// sata recorded no host figures at 4 VUs; nvme's wait time went
	// negative at 8 (a counter reset the report must not hide).
	for i, s := range sec.Profiles[0].Steps {
		if s.VUs == 8 {
			h := *s.Host
			h.CPUIOWaitPct = -2
			sec.Profiles[0].Steps[i].Host = &h
		}
	}
	page, got := checkInBrowser(t, in, []string{"step-3-chart-time-1"}, map[string]int{"step-3-chart-time-1": 2})
	bars := map[string]int{}
	for _, p := range got.Parts {
		for _, b := range p.Bars {
			t.Logf("bars %s in %s: %+v", b.ID, p.ID, b)
			if b.Width < 300 {
				t.Errorf("bars %s are %.0f px wide, want at least 300", b.ID, b.Width)
			}
			for _, n := range b.Series {
				bars[b.ID] += n
			}
		}
	}
	// Two steps × two targets.
	for _, id := range []string{"s2-chart-nopm", "s2-chart-tpm", "s2-chart-tpm-per-vu"} {
		if bars[id] != 4 {
			t.Errorf("%s drew %d bars, want 4 (2 targets × 2 steps)", id, bars[id])
		}
	}
	if bars["s2-chart-ratio"] != 2 {
		t.Errorf("ratio drew %d bars, want 2", bars["s2-chart-ratio"])
	}
	// CPU: nvme's idle and iowait at 4 and 8 VUs, the negative one too.
	if bars["s2-chart-cpu"] != 4 {
		t.Errorf("cpu drew %d bars, want 4 (negative iowait included)", bars["s2-chart-cpu"])
	}
	if !strings.Contains(page, "Negative: nvme iowait at 8 (−2.00) VUs, drawn below zero.") {
		t.Errorf("the cpu chart does not say that a value is negative")
	}
	for _, p := range got.Parts {
		if p.ID == "profiles" {
			for _, b := range p.Bars {
				if b.ID == "s2-chart-nopm" && b.Whiskers != 3 {
					t.Errorf("NOPM bars have %d whiskers, want 3 (every step but sata's at 8 VUs, of two runs, has an interval)", b.Whiskers)
				}
			}
		}
	}
}

// checkParts checks that the study report has exactly the parts of want,
// in studyParts order, each with at least one table or chart and the
// number of uPlot canvases want gives.
func checkParts(t *testing.T, got probeResult, want map[string]int) {
	t.Helper()
	var order, gotIDs []string
	for _, p := range studyParts {
		if _, ok := want[p.ID]; ok {
			order = append(order, p.ID)
		}
	}
	for _, p := range got.Parts {
		gotIDs = append(gotIDs, p.ID)
		if p.Tables+p.Canvases+len(p.Bars) == 0 && p.ID != "summary" {
			t.Errorf("part %s drew no table and no chart", p.ID)
		}
		if n, ok := want[p.ID]; ok && p.Canvases != n {
			t.Errorf("part %s drew %d charts, want %d", p.ID, p.Canvases, n)
		}
	}
	if !slices.Equal(gotIDs, order) {
		t.Errorf("parts %v, want %v", gotIDs, order)
	}
}

// checkInBrowser renders in as HTML, opens it in Chromium and checks that
// the charts wantCharts (in page order) drew every value series and the
// marks of their spans (wantSpans: the number of span colours a chart
// marks, phases and events), with no script error, console line or
// network request. It returns the page and what the probe found.
func checkInBrowser(t *testing.T, in Input, wantCharts []string, wantSpans map[string]int) (string, probeResult) {
	t.Helper()
	chromium := findChromium(t)
	var buf bytes.Buffer
	if err := HTML(&buf, in); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	got, consoleLines := openInBrowser(t, chromium, buf.String())

	if len(got.Errors) > 0 {
		t.Errorf("page errors: %q", got.Errors)
	}
	if len(got.Violations) > 0 {
		t.Errorf("page attempted requests blocked by its CSP: %q", got.Violations)
	}
	if len(got.Resources) > 0 {
		t.Errorf("page loaded resources, want none: %q", got.Resources)
	}
	for _, line := range consoleLines {
		t.Errorf("page logged to the console: %s", line)
	}
	if len(got.Charts) != len(wantCharts) {
		t.Fatalf("probe saw %d charts, want %d (%v)", len(got.Charts), len(wantCharts), wantCharts)
	}
	for i, c := range got.Charts {
		t.Logf("chart %s: canvas %dx%d, %d inked pixels, series %+v, spans %+v", c.ID, c.Width, c.Height, c.Inked, c.Series, c.Spans)
		if c.ID != wantCharts[i] {
			t.Errorf("chart %d is %s, want %s", i, c.ID, wantCharts[i])
		}
		if c.Width < 300 || c.Height < 200 { // per-second charts are 240 CSS px high
			t.Errorf("chart %s canvas is %dx%d, want at least 300x200", c.ID, c.Width, c.Height)
		}
		if c.Inked < 1000 {
			t.Errorf("chart %s has %d non-blank pixels, want a drawn chart", c.ID, c.Inked)
		}
		if len(c.Series) == 0 {
			t.Errorf("chart %s: no value series checked", c.ID)
		}
		for _, s := range c.Series {
			if s.Pixels < 20 {
				t.Errorf("chart %s series %q left %d pixels of its colour, want its points drawn", c.ID, s.Label, s.Pixels)
			}
		}
		if got, want := len(c.Spans), wantSpans[c.ID]; got != want {
			t.Errorf("chart %s marks spans in %d colours, want %d", c.ID, got, want)
		}
		for _, s := range c.Spans {
			if s.Pixels < 100 {
				t.Errorf("chart %s: spans of colour %s left %d pixels, want their edges drawn", c.ID, s.Color, s.Pixels)
			}
		}
	}
	return buf.String(), got
}

// TestBrowserProbeDetectsFaults proves the probe of TestHTMLInBrowser
// can fail: a page with a network request, a script error and the chart
// library disabled must be reported as such.
func TestBrowserProbeDetectsFaults(t *testing.T) {
	chromium := findChromium(t)
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	faults := `<img src="http://127.0.0.1:9/pixel.png" alt=""><script>throw new Error("injected fault");</script>`
	page := strings.Replace(buf.String(), "<main>", "<main>"+faults, 1)
	page = strings.Replace(page, "<script>/*! https://github.com/leeoniya/uPlot", `<script type="text/plain">/*! https://github.com/leeoniya/uPlot`, 1)
	got, consoleLines := openInBrowser(t, chromium, page)
	if len(got.Violations) == 0 && len(got.Resources) == 0 {
		t.Errorf("probe saw no request for the injected image, want a CSP violation or a resource entry")
	}
	if !slices.ContainsFunc(got.Errors, func(e string) bool { return strings.Contains(e, "injected fault") }) {
		t.Errorf("probe errors %q, want the injected fault", got.Errors)
	}
	if !slices.ContainsFunc(got.Errors, func(e string) bool { return strings.Contains(e, "uPlot is not defined") }) {
		t.Errorf("probe errors %q, want uPlot missing", got.Errors)
	}
	for _, c := range got.Charts {
		if c.Width != 0 || c.Inked != 0 {
			t.Errorf("chart %s: canvas %dx%d with %d inked pixels, want nothing drawn without uPlot", c.ID, c.Width, c.Height, c.Inked)
		}
	}
	if len(got.Charts) == 0 {
		t.Errorf("probe saw no chart, want the chart placeholders listed")
	}
	if len(consoleLines) == 0 {
		t.Errorf("no console line in Chromium's log, want the uncaught error")
	}
}

// openInBrowser writes page (with the probe put first into <head>) to a
// temporary file, has headless Chromium load it and dump the DOM, and
// returns the probe's findings and the page's console lines from
// Chromium's log.
func openInBrowser(t *testing.T, chromium, page string) (probeResult, []string) {
	t.Helper()
	const head = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	rest, ok := strings.CutPrefix(page, head)
	if !ok {
		t.Fatalf("HTML report does not start with the expected <head>")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(head+probeScript+"\n"+rest), 0o644); err != nil {
		t.Fatalf("write report: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1200,900", "--virtual-time-budget=5000",
		"--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+file)
	// Chromium forks helpers: give it its own process group and end the
	// whole group if it overruns, never anything else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s: %v\nstderr:\n%s", chromium, err, tail(stderr.String(), 3000))
	}

	m := regexp.MustCompile(`(?s)<pre id="probe-result">(.*?)</pre>`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no probe result in the dumped DOM (the page did not finish loading?)\nstderr:\n%s", tail(stderr.String(), 3000))
	}
	var got probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatalf("probe result %q: %v", m[1], err)
	}
	// Console messages of the page (any level) reach Chromium's log as
	// CONSOLE lines.
	var console []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return got, console
}

// findChromium returns the Chromium binary that scripts/testservers.sh
// installs (make test).
func findChromium(t *testing.T) string {
	t.Helper()
	testenv.Require(t, testenv.Chromium)
	return testenv.ChromiumPath()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// TestStudyPrintsOnePartPerPage prints a short study report to PDF with
// Chromium: every part starts a page (the print stylesheet), so a report
// whose parts would all fit on two pages prints on one page per part.
func TestStudyPrintsOnePartPerPage(t *testing.T) {
	chromium := findChromium(t)
	e := experimentFixture().Experiment
	short := &Experiment{ID: e.ID, Name: "short", Status: "ok", Baseline: "nvme", Targets: e.Targets[:2], Schedule: e.Schedule[:2],
		Sections: e.Sections[:1], Cost: e.Cost, Method: []string{"Scale: 4 warehouses."}}
	short.Cost.Table.Rows = short.Cost.Table.Rows[:1]
	for i := range short.Targets {
		short.Targets[i].FullContext = map[string]string{"tool.version": "v0.1.0-test"}
	}
	var buf bytes.Buffer
	if err := HTML(&buf, Input{Experiment: short}); err != nil {
		t.Fatal(err)
	}
	parts := len(newStudy(short).parts())
	dir := t.TempDir()
	file, pdf := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
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
	pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(b, -1))
	t.Logf("%d parts, %d pages", parts, pages)
	if parts < 4 {
		t.Fatalf("the short report has %d parts, want at least 4 for this test to mean something", parts)
	}
	if pages < parts {
		t.Errorf("printed on %d pages, want at least one per part (%d)", pages, parts)
	}
}
