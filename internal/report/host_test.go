package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// withoutHost is the fixture as measured without samplers: no host
// figures, no per-second series.
func withoutHost() Input {
	in := fixture()
	for pi := range in.Profiles {
		in.Profiles[pi].Series = nil
		for si := range in.Profiles[pi].Steps {
			in.Profiles[pi].Steps[si].Host = nil
		}
	}
	return in
}

func chartData(t *testing.T, page string) map[string]chartSpec {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script id="oltplab-charts" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
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
	return byID
}

// TestDiskP99Label checks that the p99 disk latency is labelled as a
// percentile of per-second averages wherever it appears.
func TestDiskP99Label(t *testing.T) {
	const label = "p99 of per-second averages, not a per-I/O percentile"
	for _, w := range []struct {
		name  string
		write func(io.Writer, Input) error
		want  int // at least this many occurrences
	}{
		{"html", HTML, 4}, // chart note, legend label (in the chart data), table note, method
		{"markdown", Markdown, 1},
	} {
		t.Run(w.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := w.write(&buf, fixture()); err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := strings.Count(buf.String(), label); got < w.want {
				t.Errorf("%s has %q %d times, want at least %d", w.name, label, got, w.want)
			}
		})
	}
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	c := chartData(t, buf.String())["chart-disk-latency"]
	if len(c.Series) != 2 || c.Series[1].Label != "nvme "+label || !c.Series[1].Dash {
		t.Errorf("chart-disk-latency series %+v, want nvme avg and a dashed %q", c.Series, "nvme "+label)
	}
}

func TestHostChartData(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixture()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	byID := chartData(t, buf.String())
	at := func(id string, series, x int) *float64 {
		c, ok := byID[id]
		if !ok || series >= len(c.Series) || x >= len(c.Series[series].Values) {
			t.Fatalf("chart %s has no series %d point %d", id, series, x)
		}
		return c.Series[series].Values[x]
	}
	tests := []struct {
		name      string
		id        string
		series, x int
		want      float64
	}{
		{"cpu idle at 8 VUs", "chart-cpu", 0, 3, 16},
		{"cpu iowait at 1 VU", "chart-cpu", 1, 0, 1.5},
		{"disk avg latency at 4 VUs", "chart-disk-latency", 0, 2, 0.33},
		{"disk p99 latency at 8 VUs", "chart-disk-latency", 1, 3, 3.8},
		{"cpu wait share at 1 VU", "chart-waits-0", 0, 0, 62},
		{"lock wait share at 8 VUs", "chart-waits-0", 3, 3, 17},
		{"tpm in the dip", "chart-series-0-throughput", 0, 71, fixtureSeries(8, 111).Points[71].TPM},
		{"iowait in the dip", "chart-series-0-cpu", 1, 74, 30},
		{"iops in the dip", "chart-series-0-disk", 0, 77, 9500},
	}
	for _, tt := range tests {
		if got := at(tt.id, tt.series, tt.x); got == nil || *got != tt.want {
			t.Errorf("%s: %s series %d point %d = %v, want %v", tt.name, tt.id, tt.series, tt.x, deref([]*float64{got}), tt.want)
		}
	}
	if got := byID["chart-cpu"].Series; len(got) != 2 {
		t.Errorf("chart-cpu has %d series, want nvme idle and iowait only (sata was not sampled)", len(got))
	}
	if _, ok := byID["chart-waits-1"]; ok {
		t.Errorf("chart-waits-1 drawn for sata, which has no host figures")
	}
	var classes []string
	for _, s := range byID["chart-waits-0"].Series {
		classes = append(classes, s.Label)
	}
	if got, want := strings.Join(classes, ","), "cpu,data_io,log_io,lock,latch,client"; got != want {
		t.Errorf("chart-waits-0 classes %s, want %s", got, want)
	}
	tput := byID["chart-series-0-throughput"]
	if tput.XKind != "seconds" || len(tput.X) != 120 || tput.X[0] != 1 || tput.Sync == "" || tput.Y2Label == "" {
		t.Errorf("chart-series-0-throughput x_kind %q, %d x values from %v, sync %q, y2 %q; want 120 seconds from 1, a sync key and a right axis",
			tput.XKind, len(tput.X), tput.X[:min(1, len(tput.X))], tput.Sync, tput.Y2Label)
	}
	if !strings.Contains(tput.Title, "8 VUs") || !strings.Contains(tput.Title, "run 111") {
		t.Errorf("chart-series-0-throughput title %q, want the step's VUs and run id", tput.Title)
	}
	if p99 := tput.Series[2]; p99.Scale != "y2" || p99.Values[29] != nil || p99.Values[28] == nil {
		t.Errorf("p99 series scale %q, t=29 %v, t=30 %v; want the right axis and a gap at 30 s (no transaction)",
			p99.Scale, deref(p99.Values[28:29]), deref(p99.Values[29:30]))
	}
}

// TestWithoutHostFigures renders the fixture as measured without
// samplers: no host chart, section or table appears, and the CSV host
// columns are empty.
func TestWithoutHostFigures(t *testing.T) {
	var page bytes.Buffer
	if err := HTML(&page, withoutHost()); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	for _, absent := range []string{`id="host-charts"`, `id="series-charts"`, `id="chart-cpu"`, `id="host-0"`, "per-I/O percentile"} {
		if strings.Contains(page.String(), absent) {
			t.Errorf("HTML without host figures contains %s", absent)
		}
	}
	if got, want := len(chartData(t, page.String())), 6; got != want {
		t.Errorf("HTML without host figures has %d charts, want %d", got, want)
	}
	var md bytes.Buffer
	if err := Markdown(&md, withoutHost()); err != nil {
		t.Fatalf("Markdown: %v", err)
	}
	if strings.Contains(md.String(), "Host and database") {
		t.Errorf("Markdown without host figures has a host table")
	}
	var buf bytes.Buffer
	if err := CSV(&buf, withoutHost()); err != nil {
		t.Fatalf("CSV: %v", err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("read CSV: %v", err)
	}
	first := slices.Index(csvHeader, hostCSVHeader()[0])
	for i, r := range rows[1:] {
		for j, f := range r[first : first+len(hostCSVHeader())] {
			if f != "" {
				t.Errorf("row %d column %s = %q, want empty without host figures", i+1, csvHeader[first+j], f)
			}
		}
	}
}

func TestCSVHostColumns(t *testing.T) {
	var buf bytes.Buffer
	if err := CSV(&buf, fixture()); err != nil {
		t.Fatalf("CSV: %v", err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("read CSV: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	tests := []struct {
		name   string
		row    int // 1-based data row
		column string
		want   string
	}{
		{"nvme 8 VUs iowait", 10, "host_cpu_iowait_pct", "13.000"},
		{"nvme device", 1, "host_data_device", "nvme0n1"},
		{"nvme p99 latency", 12, "host_disk_latency_p99_of_per_second_avg_ms", "3.800"},
		{"class absent from a sampled step", 1, "host_wait_share_other_pct", "0.000"},
		{"avg waits sorted by label", 7, "host_avg_wait_ms", "WAL sync=0.510;data file read=0.150;row lock wait=1.900"},
		{"sata not sampled", 13, "host_cpu_busy_pct", ""},
	}
	for _, tt := range tests {
		i, ok := col[tt.column]
		if !ok {
			t.Fatalf("no CSV column %s", tt.column)
		}
		if got := rows[tt.row][i]; got != tt.want {
			t.Errorf("%s: row %d %s = %q, want %q", tt.name, tt.row, tt.column, got, tt.want)
		}
	}
}

func TestHostTable(t *testing.T) {
	in := fixture()
	nvme := &in.Profiles[0]
	nvme.Steps[1].Host = nil // a step measured without samplers
	sda := *nvme.Steps[2].Host
	sda.DataDevice = "sda"
	nvme.Steps[2].Host = &sda
	v := newView(in)
	tab := v.hostTable(0)
	if got := v.hostTable(1); len(got.Header) != 0 {
		t.Errorf("sata host table has header %q, want no table", got.Header)
	}
	devCol := -1
	for i, h := range tab.Header {
		if h == "Data device" {
			devCol = i
		}
	}
	if devCol < 0 {
		t.Fatalf("host table header %q, want a Data device column for two devices", tab.Header)
	}
	tests := []struct {
		name      string
		row, cell int
		want      string
	}{
		{"unsampled step has dashes", 1, 1, dash},
		{"unsampled step last cell", 1, len(tab.Header) - 1, dash},
		{"second device", 2, devCol, "sda"},
		{"top wait classes", 3, len(tab.Header) - 2, "cpu 31.0%, log_io 29.0%, lock 17.0%"},
		{"average waits longest first", 3, len(tab.Header) - 1, "row lock wait 4.70 ms; WAL sync 1.20 ms; data file read 0.31 ms"},
	}
	for _, tt := range tests {
		if got := tab.Rows[tt.row].Cells[tt.cell].Text; got != tt.want {
			t.Errorf("%s: row %d cell %d = %q, want %q", tt.name, tt.row, tt.cell, got, tt.want)
		}
	}
	for i, r := range tab.Rows {
		if len(r.Cells) != len(tab.Header) {
			t.Errorf("row %d has %d cells, want %d", i, len(r.Cells), len(tab.Header))
		}
	}
}

func TestTopWaitClasses(t *testing.T) {
	tests := []struct {
		name   string
		shares map[string]float64
		want   string
	}{
		{"largest first", map[string]float64{"cpu": 10, "lock": 50, "log_io": 30, "client": 5}, "lock 50.0%, log_io 30.0%, cpu 10.0%"},
		{"ties in class order", map[string]float64{"other": 20, "cpu": 20, "latch": 20, "data_io": 20}, "cpu 20.0%, data_io 20.0%, latch 20.0%"},
		{"unknown class after known ones on a tie", map[string]float64{"zzz": 40, "cpu": 40}, "cpu 40.0%, zzz 40.0%"},
		{"fewer than three", map[string]float64{"cpu": 100}, "cpu 100.0%"},
		{"none", nil, dash},
	}
	for _, tt := range tests {
		if got := formatWaitShares(tt.shares); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestIOPSChartCaps: a target's I/O cap is drawn beside its IOPS, unless
// it is far above every value (a cap set only to count the instance's own
// I/O); the instance's own writes are a series of their own.
func TestIOPSChartCaps(t *testing.T) {
	for _, c := range []struct {
		limit float64
		want  bool
	}{{3500, true}, {1e6, false}} {
		in := fixture()
		in.Profiles[0].Limits = map[string]float64{"write_iops": c.limit}
		chart := newView(in).iopsChart()
		var caps, own int
		for _, s := range chart.Series {
			if s.Role == "ref" && s.Label == "nvme write cap" {
				caps++
			}
			if s.Label == "nvme own write" && s.Role == "value" {
				own++
			}
		}
		if (caps == 1) != c.want {
			t.Errorf("cap %g: got %d cap lines, want drawn=%v", c.limit, caps, c.want)
		}
		if own != 1 {
			t.Errorf("cap %g: got %d own-write series, want 1", c.limit, own)
		}
	}
}

// TestLoadGeneratorOnly: with the database on another machine the report
// called the sampled host's busiest disk "the data device (vda)". It says
// the figures are the load generator's and the database host was not
// measured.
func TestLoadGeneratorOnly(t *testing.T) {
	in := fixture()
	for i := range in.Profiles[0].Steps {
		h := *in.Profiles[0].Steps[i].Host
		h.LoadGeneratorOnly, h.DatabaseHost, h.DataDevice = true, "10.0.0.5", "vda"
		in.Profiles[0].Steps[i].Host = &h
	}
	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"Load generator (database host not measured) and database: nvme",
		"The database ran on another machine (10.0.0.5), which was not measured"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if strings.Contains(out, "Disk: the data device (vda)") {
		t.Errorf("Markdown calls the load generator's disk the data device")
	}
	var html bytes.Buffer
	if err := HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "its curve is the load generator") {
		t.Errorf("the disk chart of a remote database does not say whose disk it shows")
	}
}

// TestAgentMeasuredHost: figures an agent measured on the database's host
// are labelled as that host's.
func TestAgentMeasuredHost(t *testing.T) {
	in := fixture()
	for i := range in.Profiles[0].Steps {
		h := *in.Profiles[0].Steps[i].Host
		h.Agent, h.DatabaseHost = "10.0.0.5:7300", "10.0.0.5"
		in.Profiles[0].Steps[i].Host = &h
	}
	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Database host (oltplab agent at 10.0.0.5:7300) and database: nvme") ||
		!strings.Contains(md.String(), "measured there by oltplab agent at 10.0.0.5:7300") {
		t.Errorf("agent-measured figures not labelled as the database host's")
	}
}
