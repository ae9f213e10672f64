package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRenderHTMLForInspection writes the fixture's HTML report to the
// file named by OLTPLAB_REPORT_OUT, for a look in a browser.
func TestRenderHTMLForInspection(t *testing.T) {
	out := os.Getenv("OLTPLAB_REPORT_OUT")
	if out == "" {
		t.Skip("OLTPLAB_REPORT_OUT not set")
	}
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNoSecretInAnyOutput(t *testing.T) {
	for _, w := range []struct {
		name  string
		write func(io.Writer, Input) error
	}{{"html", HTML}, {"markdown", Markdown}, {"csv", CSV}, {"json", JSON}} {
		t.Run(w.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := w.write(&buf, fixture()); err != nil {
				t.Fatalf("render: %v", err)
			}
			if strings.Contains(buf.String(), fixtureSecret) {
				t.Errorf("%s output contains the target password", w.name)
			}
			if !strings.Contains(buf.String(), "REDACTED") {
				t.Errorf("%s output has no REDACTED target, want the password replaced", w.name)
			}
		})
	}
}

func TestHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	page := buf.String()
	checks := []struct {
		name string
		ok   bool
	}{
		{"title escaped", strings.Contains(page, "<h1>NVMe vs SATA &lt;ssd&gt; &amp; co</h1>")},
		{"no raw title", !strings.Contains(page, "<ssd>")},
		{"context value escaped", strings.Contains(page, "sda (Samsung 870 EVO) &lt;SATA&gt;")},
		{"CSP forbids network", strings.Contains(page, `content="default-src 'none';`)},
		{"uPlot inlined", strings.Contains(page, "/*! https://github.com/leeoniya/uPlot (v"+uPlotVersion+") */")},
		{"footer with version", strings.Contains(page, "<footer>oltplab v0.1.0-test")},
		{"differing key highlighted", regexp.MustCompile(`<tr class="diff"><td>host.storage</td>`).MatchString(page)},
		{"same key not highlighted", regexp.MustCompile(`<tr><td>host.cores</td>`).MatchString(page)},
		{"high variation cell", strings.Contains(page, `<td class="num warn">16.7%</td>`)},
		{"not significant ratio", strings.Contains(page, `<td class="num ns">0.99× [0.94, 1.04] not significant</td>`)},
		{"too few runs", strings.Contains(page, `<td class="num ns">0.58× too few runs for an interval (use --repeat 3 or more)</td>`)},
		{"knee verdict", strings.Contains(page, "plateau from 4 VUs: each user added from 4 to 8 VUs brought 342 NOPM")},
		{"plateau rule explained", strings.Contains(page, "the knee is the last step before that stops")},
		{"suspect run in red", strings.Contains(page, `<td class="bad">NOPM from the database (9000 new orders) is &#43;37.0% off`)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("HTML report: check %q failed", c.name)
		}
	}
	for _, id := range []string{"chart-nopm", "chart-tpm", "chart-tpm-per-vu", "chart-ratio", "chart-latency-0", "chart-latency-1",
		"chart-cpu", "chart-disk-latency", "chart-waits-0", "chart-series-0-throughput", "chart-series-0-cpu", "chart-series-0-disk"} {
		if !strings.Contains(page, `<div class="chart" id="`+id+`"></div>`) {
			t.Errorf("HTML report has no chart %s", id)
		}
	}
	// Nothing may be loaded from elsewhere: no src/href attributes, no
	// CSS url(), no @import.
	for _, re := range []string{`(?i)<(script|img|link|iframe)[^>]+(src|href)=`, `(?i)url\(`, `(?i)@import`} {
		if loc := regexp.MustCompile(re).FindStringIndex(page); loc != nil {
			t.Errorf("HTML report references an external resource (%s): %q", re, page[loc[0]:min(loc[1]+60, len(page))])
		}
	}
}

func TestHTMLChartData(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	m := regexp.MustCompile(`(?s)<script id="oltplab-charts" type="application/json">(.*?)</script>`).FindStringSubmatch(buf.String())
	if m == nil {
		t.Fatal("no chart data script in the HTML report")
	}
	var charts []chartSpec
	if err := json.Unmarshal([]byte(m[1]), &charts); err != nil {
		t.Fatalf("chart data is not JSON: %v", err)
	}
	byID := map[string]chartSpec{}
	for _, c := range charts {
		byID[c.ID] = c
	}
	nopm := byID["chart-nopm"]
	if got, want := len(nopm.Series), 6; got != want { // 2 profiles x (mean, CI high, CI low)
		t.Fatalf("chart-nopm has %d series, want %d", got, want)
	}
	if got, want := len(nopm.Bands), 2; got != want {
		t.Errorf("chart-nopm has %d bands, want %d", got, want)
	}
	// sata at 4 VUs: mean 24,000, CI 14,063..33,937.
	s := nopm.Series[3]
	if s.Label != "sata" || s.Values[2] == nil || *s.Values[2] != 24000 {
		t.Errorf("chart-nopm series 3 = %s %v, want sata with 24000 at 4 VUs", s.Label, deref(s.Values))
	}
	if hi, lo := nopm.Series[4].Values[2], nopm.Series[5].Values[2]; hi == nil || lo == nil || *lo >= 24000 || *hi <= 24000 {
		t.Errorf("chart-nopm sata CI at 4 VUs = [%v, %v], want around 24000", deref([]*float64{lo}), deref([]*float64{hi}))
	}
	ratio := byID["chart-ratio"]
	if got := ratio.Series[len(ratio.Series)-1]; got.Role != "ref" {
		t.Errorf("chart-ratio last series role %q, want the reference line", got.Role)
	}
	if r := ratio.Series[0].Values[3]; r == nil || *r < 0.57 || *r > 0.58 {
		t.Errorf("chart-ratio at 8 VUs = %v, want 21250/36867 = 0.576", deref([]*float64{r}))
	}
}

func deref(ps []*float64) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		if p != nil {
			out[i] = *p
		}
	}
	return out
}

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fixture()); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	var doc jsonDoc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JSON output does not parse: %v", err)
	}
	if got, want := len(doc.Profiles), 2; got != want {
		t.Fatalf("JSON has %d profiles, want %d", got, want)
	}
	if got, want := strings.Join(doc.ContextDiffKeys, ","), "db.wal_compression,host.storage"; got != want {
		t.Errorf("context_diff_keys = %s, want %s", got, want)
	}
	if len(doc.Comparisons) != 1 || len(doc.Comparisons[0].Steps) != 4 {
		t.Fatalf("comparisons = %+v, want one with 4 steps", doc.Comparisons)
	}
	c := doc.Comparisons[0]
	if c.ProfileID != 2 || c.BaselineID != 1 {
		t.Errorf("comparison profile %d baseline %d, want 2 and 1", c.ProfileID, c.BaselineID)
	}
	tests := []struct {
		vus         int
		significant bool
		hasCI       bool
	}{
		{1, false, true},
		{2, true, true},
		// sata's three runs vary by 17%: on the log scale the interval
		// (0.45-1.02) reaches 1, where Fieller's ended at 0.96.
		{4, false, true},
		{8, false, false}, // two complete runs of sata: too few for an interval
	}
	for i, tt := range tests {
		got := c.Steps[i]
		if got.VUs != tt.vus || got.NOPM.Significant != tt.significant || got.NOPM.HasCI != tt.hasCI || got.NOPM.TooFew == tt.hasCI {
			t.Errorf("comparison step %d = %d VUs significant %v (CI %v, too few %v), want %d VUs significant %v (CI %v)",
				i, got.VUs, got.NOPM.Significant, got.NOPM.HasCI, got.NOPM.TooFew, tt.vus, tt.significant, tt.hasCI)
		}
		if got.NOPM.HasCI && got.NOPM.Lo <= 0 {
			t.Errorf("comparison step %d: interval [%v, %v] reaches below zero", i, got.NOPM.Lo, got.NOPM.Hi)
		}
	}
	if got := doc.Profiles[1].Steps[3].Repeats[2]; !got.Partial || got.RunID != 212 {
		t.Errorf("sata 8 VUs repeat 3 = %+v, want partial run 212", got)
	}
	if got, want := doc.Profiles[0].Verdict.KneeVUs, 4; got != want {
		t.Errorf("nvme knee = %d VUs, want %d", got, want)
	}
}

func TestNewStep(t *testing.T) {
	s := NewStep(4, []Repeat{{RunID: 1, NOPM: 100, TPM: 400}, {RunID: 2, NOPM: 120, TPM: 480}, {RunID: 3, NOPM: 5, TPM: 20, Partial: true}}, nil)
	if s.NOPM.N != 2 || s.NOPM.Mean != 110 || s.TPM.Mean != 440 || s.TPMPerVU.Mean != 110 || s.TPMPerVU.Min != 100 {
		t.Errorf("NewStep summaries NOPM %+v TPM %+v TPM/VU %+v, want 2 complete repeats, means 110, 440, 110", s.NOPM, s.TPM, s.TPMPerVU)
	}
	if len(s.Repeats) != 3 {
		t.Errorf("NewStep kept %d repeats, want all 3", len(s.Repeats))
	}
}

func TestEmptyInput(t *testing.T) {
	for _, w := range []struct {
		name  string
		write func(io.Writer, Input) error
	}{{"html", HTML}, {"markdown", Markdown}, {"csv", CSV}, {"json", JSON}} {
		t.Run(w.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := w.write(&buf, Input{}); err != nil {
				t.Fatalf("render empty input: %v", err)
			}
			if buf.Len() == 0 {
				t.Errorf("empty input rendered nothing, want at least a header")
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"big number", formatNumber(1460123.4), "1,460,123"},
		{"hundreds", formatNumber(412.4), "412"},
		{"tens", formatNumber(41.24), "41.2"},
		{"units", formatNumber(4.126), "4.13"},
		{"url password", redactTarget("mysql://root:pw@127.0.0.1:3306/tpcc"), "mysql://root:REDACTED@127.0.0.1:3306/tpcc"},
		{"url without password", redactTarget("postgres://bench@127.0.0.1/tpcc"), "postgres://bench@127.0.0.1/tpcc"},
		{"kv password quoted", redactTarget("host=h password='a b' dbname=x"), "host=h password=REDACTED dbname=x"},
		{"sqlite path", redactTarget("sqlite:/tmp/tpcc.db"), "sqlite:/tmp/tpcc.db"},
		{"markdown escape", mdEscape("a|b *c* [d](e)\nf"), `a\|b \*c\* \[d\](e) f`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestFewStepsProfileReport: a profile report of two steps draws its
// charts against virtual users as grouped bars (none left to the script),
// and a step one profile lacks is said under the chart and written "n/a"
// in the bars.
func TestFewStepsProfileReport(t *testing.T) {
	in := fixture()
	for i := range in.Profiles {
		p := &in.Profiles[i]
		var keep []Step
		for _, s := range p.Steps {
			if s.VUs == 4 || s.VUs == 8 && i == 0 {
				keep = append(keep, s)
			}
		}
		p.Steps = keep
	}
	var buf bytes.Buffer
	if err := HTML(&buf, in); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, id := range []string{"chart-nopm", "chart-tpm", "chart-tpm-per-vu", "chart-ratio"} {
		if !strings.Contains(page, `<svg class="bars" id="`+id+`"`) {
			t.Errorf("no grouped bars for %s", id)
		}
	}
	m := regexp.MustCompile(`(?s)<script id="oltplab-charts" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no chart data")
	}
	var specs []chartSpec
	if err := json.Unmarshal([]byte(m[1]), &specs); err != nil {
		t.Fatal(err)
	}
	for _, c := range specs {
		if c.XKind == "" {
			t.Errorf("chart %s against virtual users left to the script, want bars", c.ID)
		}
	}
	if !strings.Contains(page, "No figure for sata at 8 VUs") {
		t.Errorf("the NOPM chart does not say sata has no 8-VU figure")
	}
	if n := strings.Count(page, `class="missing"`); n == 0 {
		t.Errorf("no n/a slot in the bars, want sata's missing 8-VU bar written")
	}
}

// TestFailureRateRepeats: a repeat with too many failed transactions
// (status "failures") is counted as such in the profiles table, not as
// partial, and is left out of the summaries.
func TestFailureRateRepeats(t *testing.T) {
	s := NewStep(2, []Repeat{{RunID: 1, NOPM: 100, TPM: 400}, {RunID: 2, NOPM: 5, TPM: 900, Failures: true}}, nil)
	if s.NOPM.N != 1 || s.TPM.Mean != 400 {
		t.Errorf("NewStep summaries NOPM %+v TPM %+v: want only the repeat within its failure rate", s.NOPM, s.TPM)
	}
	v := newView(Input{Profiles: []Profile{{ID: 1, Label: "p", Steps: []Step{s}}}})
	tb := v.profilesTable()
	col := func(name string) int {
		for i, h := range tb.Header {
			if h == name {
				return i
			}
		}
		t.Fatalf("profiles table header %q has no %q", tb.Header, name)
		return -1
	}
	cells := tb.Rows[0].Cells
	if got := cells[col("Failures")]; got.Text != "1" || !got.Bad {
		t.Errorf("Failures cell %+v: want 1, marked bad", got)
	}
	if got := cells[col("Partial")].Text; got != "0" {
		t.Errorf("Partial cell %q: want 0 (a failure-rate run is measured to its end)", got)
	}
}

// TestMarkdownHeadingsHaveContent: no heading of the Markdown report is
// a heading over nothing: before the next heading of its level or
// above, some text or table stands under it (where the HTML report
// draws a chart, Markdown writes its figures as a table).
func TestMarkdownHeadingsHaveContent(t *testing.T) {
	heading := regexp.MustCompile(`^(#+) `)
	for name, in := range map[string]Input{"profiles": fixture(), "experiment": experimentFixture(), "tpch": tpchFixture()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, in); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			headings := 0
			for i, l := range lines {
				m := heading.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				headings++
				content := false
				for _, next := range lines[i+1:] {
					if n := heading.FindStringSubmatch(next); n != nil {
						if len(n[1]) <= len(m[1]) {
							break
						}
						continue
					}
					if strings.TrimSpace(next) != "" {
						content = true
						break
					}
				}
				if !content {
					t.Errorf("line %d: %q has nothing under it", i+1, l)
				}
			}
			if headings < 5 {
				t.Errorf("%d headings, want the report's sections", headings)
			}
		})
	}
}
