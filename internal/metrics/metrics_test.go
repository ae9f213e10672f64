package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// gather returns m's families by name.
func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// value finds the series of family f whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, f string, want map[string]string) *dto.Metric {
	t.Helper()
next:
	for _, m := range fams[f].GetMetric() {
		l := labels(m)
		for k, v := range want {
			if l[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s%v: no such series", f, want)
	return nil
}

// TestRecording: what the driver reports is what the families hold.
func TestRecording(t *testing.T) {
	m := New()
	m.Profile("nvme", "postgres")
	m.Phase(driver.PhaseRampup, 8)
	m.Phase(driver.PhaseMeasure, 8)
	for range 3 {
		m.Transaction(driver.Transaction{Kind: tpcc.NewOrderTx, Outcome: driver.OutcomeCommitted, Latency: 3 * time.Millisecond, Retries: 1})
	}
	m.Transaction(driver.Transaction{Kind: tpcc.NewOrderTx, Outcome: driver.OutcomeRolledBack, Latency: 70 * time.Second})
	m.Transaction(driver.Transaction{Kind: tpcc.PaymentTx, Outcome: driver.OutcomeFailed, Class: dialect.ClassDeadlock, Retries: 10})
	m.Live(driver.Live{NOPM: 1200, TPM: 2700})
	f := gather(t, m)

	cases := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{TransactionsTotal, map[string]string{"type": "new_order", "outcome": "committed"}, 3},
		{TransactionsTotal, map[string]string{"type": "new_order", "outcome": "rolled_back"}, 1},
		{TransactionsTotal, map[string]string{"type": "payment", "outcome": "failed"}, 1},
		{TransactionsTotal, map[string]string{"type": "delivery", "outcome": "committed"}, 0},
		{TransactionErrors, map[string]string{"type": "payment", "class": "deadlock"}, 1},
		{TransactionRetries, map[string]string{"type": "new_order"}, 3},
		{TransactionRetries, map[string]string{"type": "payment"}, 10},
		{RunsTotal, nil, 1},
	}
	for _, c := range cases {
		got := value(t, f, c.family, c.labels).GetCounter().GetValue()
		if got != c.want {
			t.Errorf("%s%v: got %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	gauges := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{NOPM, nil, 1200}, {TPM, nil, 2700}, {VirtualUsers, nil, 8},
		{Phase, map[string]string{"phase": "measure"}, 1}, {Phase, map[string]string{"phase": "rampup"}, 0},
		{ProfileInfo, map[string]string{"label": "nvme", "dialect": "postgres"}, 1},
	}
	for _, c := range gauges {
		if got := value(t, f, c.family, c.labels).GetGauge().GetValue(); got != c.want {
			t.Errorf("%s%v: got %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	h := value(t, f, TransactionLatency, map[string]string{"type": "new_order"}).GetHistogram()
	if h.GetSampleCount() != 4 {
		t.Errorf("new_order latency count: got %d, want 4 (failures are not latencies)", h.GetSampleCount())
	}
	for _, b := range h.GetBucket() {
		// 3 ms falls in the 4 ms bucket (0.5 ms doubling), not the 2 ms one.
		want := map[float64]uint64{0.002: 0, 0.004: 3, 65.536: 3}
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%v: got %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}

	m.Phase(driver.PhaseDone, 8)
	m.Profile("sata", "postgres")
	f = gather(t, m)
	if got := value(t, f, VirtualUsers, nil).GetGauge().GetValue(); got != 0 {
		t.Errorf("virtual users after the run: got %v, want 0", got)
	}
	if n := len(f[ProfileInfo].GetMetric()); n != 1 {
		t.Errorf("%s after a second profile: %d series, want 1", ProfileInfo, n)
	}
}

// TestDashboardQueriesExposedMetrics: the sample Grafana dashboard is
// valid JSON and every metric its queries name is one oltplab exposes,
// with label values oltplab uses.
func TestDashboardQueriesExposedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../examples/grafana-oltplab.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string `json:"title"`
		Templating struct {
			List []struct {
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("examples/grafana-oltplab.json: %v", err)
	}

	m := New()
	m.Profile("x", "sqlite")
	m.Phase(driver.PhaseRampup, 1)
	m.Transaction(driver.Transaction{Kind: tpcc.NewOrderTx, Outcome: driver.OutcomeFailed, Class: dialect.ClassDeadlock})
	exposed := map[string]bool{}
	values := map[string]map[string]bool{}
	for name, f := range gather(t, m) {
		exposed[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				exposed[name+s] = true
			}
		}
		for _, s := range f.GetMetric() {
			for k, v := range labels(s) {
				if values[k] == nil {
					values[k] = map[string]bool{}
				}
				values[k][v] = true
			}
		}
	}
	for _, phase := range []string{"measure", "grace"} {
		values["phase"][phase] = true
	}

	var exprs []string
	for _, v := range dash.Templating.List {
		exprs = append(exprs, v.Query)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	nameRE := regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	matcherRE := regexp.MustCompile(`(\w+)="([^"]*)"`)
	named := map[string]bool{}
	for _, e := range exprs {
		for _, tok := range nameRE.FindAllString(e, -1) {
			if !strings.HasPrefix(tok, "oltplab_") && !strings.HasPrefix(tok, "process_") {
				continue
			}
			named[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(tok, "_bucket"), "_sum"), "_count")] = true
			if !exposed[tok] {
				t.Errorf("dashboard query %q names %s, which oltplab does not expose", e, tok)
			}
		}
		for _, mt := range matcherRE.FindAllStringSubmatch(e, -1) {
			if mt[1] == "instance" || strings.HasPrefix(mt[2], "$") {
				continue
			}
			if !values[mt[1]][mt[2]] {
				t.Errorf("dashboard query %q matches %s=%q, a label value oltplab never sets", e, mt[1], mt[2])
			}
		}
	}
	for _, n := range []string{TransactionsTotal, TransactionLatency, NOPM, TPM, Phase, VirtualUsers, DriverCPUSecondsTotal} {
		if !named[n] {
			t.Errorf("the dashboard shows no %s", n)
		}
	}
}
