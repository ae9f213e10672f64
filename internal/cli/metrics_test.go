package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/oltplab/oltplab/internal/metrics"
	"github.com/oltplab/oltplab/internal/testenv"
)

// scrape reads url's exposition with the client library's own parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape %s: Content-Type %q, want the text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition of %s: %v", url, err)
	}
	return fams
}

// sumCounter adds every series of a counter family.
func sumCounter(f *dto.MetricFamily) float64 {
	var s float64
	for _, m := range f.GetMetric() {
		s += m.GetCounter().GetValue()
	}
	return s
}

func histogramCount(f *dto.MetricFamily) uint64 {
	var n uint64
	for _, m := range f.GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// TestMetricsDuringRun scrapes `run --metrics-listen` while a short SQLite
// run goes: every family is there, parsed by the client library, and the
// counters grow between two scrapes; the endpoint ends with the command.
func TestMetricsDuringRun(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	target, _ := builtSQLite(t)
	label := `fast "disk" \ 1` // quotes and a backslash: escaped in the exposition
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- testMain(context.Background(), []string{"run", "--target", target, "--vus", "2", "--rampup", "1s",
			"--duration", "4s", "--grace", "1s", "--label", label, "--metrics-listen", "127.0.0.1:0"}, env,
			Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	}()
	urlRE := regexp.MustCompile(`live metrics at (http://\S+/metrics)`)
	var url string
	code := -1
	// wait polls until cond holds or the run ends (a wait, not a timing
	// assertion: the run's own schedule bounds it).
	wait := func(cond func() bool) bool {
		for {
			if cond() {
				return true
			}
			select {
			case code = <-done:
				return cond()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if !wait(func() bool {
		m := urlRE.FindStringSubmatch(errb.String())
		if m != nil {
			url = m[1]
		}
		return url != ""
	}) {
		t.Fatalf("no metrics URL on stderr (exit %d):\n%s", code, errb.String())
	}

	var first map[string]*dto.MetricFamily
	if !wait(func() bool {
		first = scrape(t, url)
		f := first[metrics.TransactionsTotal]
		return f != nil && sumCounter(f) > 0
	}) {
		t.Fatalf("no transaction counted before the run ended")
	}
	// Every family of internal/metrics/names.go but TransactionErrors, a
	// family with a series per failure (none is expected here).
	for _, name := range []string{metrics.TransactionsTotal, metrics.TransactionRetries, metrics.TransactionLatency,
		metrics.NOPM, metrics.TPM, metrics.Phase, metrics.VirtualUsers, metrics.RunsTotal,
		metrics.DriverCPUSecondsTotal, metrics.ProfileInfo} {
		if first[name] == nil {
			t.Errorf("family %s missing from the exposition", name)
		}
	}
	if first["process_cpu_seconds_total"] == nil {
		t.Errorf("process collector's families missing")
	}
	if got := first[metrics.TransactionLatency].GetType(); got != dto.MetricType_HISTOGRAM {
		t.Errorf("%s is a %s, want a histogram", metrics.TransactionLatency, got)
	}
	if got := first[metrics.VirtualUsers].GetMetric()[0].GetGauge().GetValue(); got != 2 {
		t.Errorf("%s = %v, want 2", metrics.VirtualUsers, got)
	}
	info := first[metrics.ProfileInfo].GetMetric()
	if len(info) != 1 {
		t.Fatalf("%s has %d series, want 1", metrics.ProfileInfo, len(info))
	}
	for _, lp := range info[0].GetLabel() {
		if lp.GetName() == "label" && lp.GetValue() != label {
			t.Errorf("profile label through the exposition: got %q, want %q", lp.GetValue(), label)
		}
	}
	kinds := map[string]bool{}
	for _, m := range first[metrics.TransactionsTotal].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "type" {
				kinds[lp.GetValue()] = true
			}
		}
	}
	if len(kinds) != 5 {
		t.Errorf("transaction types in %s: got %v, want the 5 TPC-C types", metrics.TransactionsTotal, kinds)
	}

	before, beforeLat, beforeCPU := sumCounter(first[metrics.TransactionsTotal]), histogramCount(first[metrics.TransactionLatency]),
		sumCounter(first[metrics.DriverCPUSecondsTotal])
	var later map[string]*dto.MetricFamily
	if !wait(func() bool {
		later = scrape(t, url)
		return sumCounter(later[metrics.TransactionsTotal]) > before
	}) {
		t.Fatalf("%s did not grow past %v before the run ended", metrics.TransactionsTotal, before)
	}
	if got := histogramCount(later[metrics.TransactionLatency]); got <= beforeLat {
		t.Errorf("latency histogram count: got %d after %d, want it to grow", got, beforeLat)
	}
	if got := sumCounter(later[metrics.DriverCPUSecondsTotal]); got < beforeCPU || got <= 0 {
		t.Errorf("driver CPU: got %v after %v, want positive and not decreasing", got, beforeCPU)
	}

	if code == -1 {
		code = <-done
	}
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errb.String())
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("the metrics endpoint still answers after the command ended")
	}
}

// TestMetricsListenBadAddress: a wrong --metrics-listen is a usage error
// before anything runs.
func TestMetricsListenBadAddress(t *testing.T) {
	env := storeEnv(t)
	missing := "sqlite:" + filepath.Join(t.TempDir(), "nope.db")
	for _, addr := range []string{"nope", "256.0.0.1:99999"} {
		r := oltplab(t, env, "run", "--target", missing, "--duration", "1s", "--rampup", "0s", "--metrics-listen", addr)
		if r.code != exitUsage || !strings.Contains(r.err, "--metrics-listen") {
			t.Errorf("--metrics-listen %s: exit %d, stderr %q; want %d naming the flag", addr, r.code, r.err, exitUsage)
		}
	}
}
