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
    var out = { charts: [], errors: errors, violations: violations, resources: [] };
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

// TestExperimentHTMLInBrowser: an experiment's report draws the charts of
// its profile step (every target overlaid, the ratio to the baseline, CPU,
// data-disk latency and IOPS against virtual users), each with ids of its
// step, and the build step's table.
func TestExperimentHTMLInBrowser(t *testing.T) {
	var want []string
	for _, id := range []string{"chart-nopm", "chart-tpm", "chart-tpm-per-vu", "chart-ratio", "chart-latency-0", "chart-latency-1",
		"chart-cpu", "chart-disk-latency", "chart-disk-iops", "chart-waits-0",
		"chart-series-0-throughput", "chart-series-0-cpu", "chart-series-0-disk"} {
		want = append(want, "step-2-"+id)
	}
	// The neighbours step's own time series, with its phases and backups.
	want = append(want, "step-3-chart-time-1")
	page := checkInBrowser(t, experimentFixture(), want, map[string]int{"step-3-chart-time-1": 2})
	for _, s := range []string{`id="targets"`, `id="schedule"`, `id="step-1-table-1"`, `id="differences"`, `id="step-2-comparison"`} {
		if !strings.Contains(page, s) {
			t.Errorf("experiment report lacks %s", s)
		}
	}
	if strings.Contains(page, fixtureSecret) {
		t.Errorf("experiment report contains the password")
	}
}

// checkInBrowser renders in as HTML, opens it in Chromium and checks that
// the charts wantCharts (in page order) drew every value series and the
// marks of their spans (wantSpans: the number of span colours a chart
// marks, phases and events), with no script error, console line or
// network request. It returns the page.
func checkInBrowser(t *testing.T, in Input, wantCharts []string, wantSpans map[string]int) string {
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
	return buf.String()
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
// installs (make test). Without it the test is skipped, except under CI,
// where a missing browser fails it.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is required under CI for the HTML report test: scripts/testservers.sh installs it (make test)")
	}
	t.Skip("chromium not installed (make test installs it, or apt-get install chromium); set CI to make this a failure")
	return ""
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
