package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/site"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/testenv"
)

// servedLabel is a profile label with markup in it: pages must show it as
// text. --label refuses markup now; a store written before holds it, and
// servedStore plants it as such a store would.
const servedLabel = `<i>nvme</i> & "fast"`

// plainServedLabel is what the run is labelled before servedLabel
// replaces it in the store.
const plainServedLabel = "nvme-fast"

// servedStore stores two short profiles on a built SQLite database in a
// fresh results store; it returns the store's path and environment.
func servedStore(t *testing.T) (string, []string) {
	t.Helper()
	results := filepath.Join(t.TempDir(), "results.db")
	env := []string{"OLTPLAB_RESULTS=" + results, "HOME=" + t.TempDir()}
	target, _ := builtSQLite(t)
	for _, label := range []string{plainServedLabel, "sata"} {
		if r := oltplab(t, env, "run", "--target", target, "--vus", "1,2", "--rampup", "0s", "--duration", "1s",
			"--grace", "1s", "--label", label); r.code != 0 {
			t.Fatalf("run %s: exit %d", label, r.code)
		}
	}
	db, err := sql.Open("sqlite", results)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"profiles", "runs"} {
		if _, err := db.Exec("UPDATE "+table+" SET label = ? WHERE label = ?", servedLabel, plainServedLabel); err != nil {
			t.Fatal(err)
		}
	}
	return results, env
}

// startServe runs `oltplab serve` with args until the test ends and
// returns its base URL.
func startServe(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- testMain(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), env, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve: exit %d after Ctrl-C, want 0\n%s", code, errb.String())
		}
	})
	re := regexp.MustCompile(`at (http://\S+/) `)
	for {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			return strings.TrimSuffix(m[1], "/")
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve ended with exit %d before serving:\n%s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func get(t *testing.T, url string, header http.Header) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// TestServe: the pages and downloads of a store, answered on loopback
// without a token, refused to another Host and to writes, labels escaped;
// then the same store in Chromium (serveInBrowser). One store serves both:
// building it is the slow part.
func TestServe(t *testing.T) {
	testenv.Require(t, testenv.Long)
	path, env := servedStore(t)
	t.Run("pages", func(t *testing.T) { servePages(t, env) })
	t.Run("browser", func(t *testing.T) { serveInBrowser(t, path) })
}

func servePages(t *testing.T, env []string) {
	base := startServe(t, env)

	code, page, hdr := get(t, base+"/", nil)
	if code != http.StatusOK {
		t.Fatalf("index: %d\n%s", code, page)
	}
	if !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("index CSP %q, want default-src 'none'", hdr.Get("Content-Security-Policy"))
	}
	if strings.Contains(page, servedLabel) || !strings.Contains(page, html.EscapeString(servedLabel)) {
		t.Errorf("index does not show the label %q escaped", servedLabel)
	}
	for _, want := range []string{`id="compare-form"`, `href="/profiles/1"`, `href="/profiles/2"`, `href="/runs/2"`} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	cases := []struct {
		path     string
		code     int
		ctype    string
		contains string
	}{
		{"/profiles/1", 200, "text/html", "chart-nopm"},
		{"/profiles/sata", 200, "text/html", "chart-nopm"},
		{"/profiles/1/report.csv", 200, "text/csv", "vus"},
		{"/profiles/2/report.json", 200, "application/json", `"profiles"`},
		{"/compare?a=1&b=2", 200, "text/html", "chart-ratio"},
		{"/compare?a=1&b=2&format=json", 200, "application/json", `"sata"`},
		{"/compare?a=1&b=2&format=csv", 200, "text/csv", "sata"},
		{"/compare?a=1", 400, "text/plain", "two profiles"},
		{"/compare?a=1&b=nosuch", 404, "text/plain", "nosuch"},
		{"/profiles/999", 404, "text/plain", "999"},
		{"/runs/2", 200, "application/json", `"Kind": "run"`},
		{"/runs/999", 404, "text/plain", "999"},
		{"/experiments/5", 404, "text/plain", ""},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.path, "/", "_"), func(t *testing.T) {
			code, body, hdr := get(t, base+c.path, nil)
			if code != c.code || !strings.HasPrefix(hdr.Get("Content-Type"), c.ctype) || !strings.Contains(body, c.contains) {
				t.Errorf("GET %s: %d %s, body %.300q; want %d %s containing %q", c.path, code, hdr.Get("Content-Type"), body, c.code, c.ctype, c.contains)
			}
			if strings.Contains(body, servedLabel) && c.ctype == "text/html" {
				t.Errorf("GET %s: the label appears unescaped in HTML", c.path)
			}
		})
	}
	if code, _, _ := get(t, base+"/", http.Header{"Host": {"evil.example:80"}}); code != http.StatusForbidden {
		t.Errorf("request for Host evil.example without a token: %d, want 403 (DNS rebinding)", code)
	}
	resp, err := http.Post(base+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

// TestServeToken: off loopback serve needs a token; with one every
// request must carry it, in a header, a cookie, or ?token= once.
func TestServeToken(t *testing.T) {
	env := storeEnv(t)
	if r := oltplab(t, env, "results", "list"); r.code != 0 {
		t.Fatalf("results list: exit %d", r.code)
	}
	if r := oltplab(t, env, "serve", "--listen", "0.0.0.0:0"); r.code != exitUsage || !strings.Contains(r.err, "--token") {
		t.Errorf("serve on 0.0.0.0 without a token: exit %d, %q; want %d asking for --token", r.code, r.err, exitUsage)
	}
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if r := oltplab(t, env, "serve", "--listen", "0.0.0.0:0", "--token", short); r.code != exitUsage || strings.Contains(r.err, "abc") {
		t.Errorf("short token: exit %d, %q; want %d, the token not shown", r.code, r.err, exitUsage)
	}
	const token = "0123456789abcdef0123456789abcdef"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startServe(t, env, "--token", file)
	cases := []struct {
		name   string
		url    string
		header http.Header
		want   int
	}{
		{"none", base + "/", nil, http.StatusUnauthorized},
		{"wrong bearer", base + "/", http.Header{"Authorization": {"Bearer " + strings.Repeat("x", len(token))}}, http.StatusUnauthorized},
		{"prefix of it", base + "/", http.Header{"Authorization": {"Bearer " + token[:16]}}, http.StatusUnauthorized},
		{"bearer", base + "/", http.Header{"Authorization": {"Bearer " + token}}, http.StatusOK},
		{"cookie", base + "/", http.Header{"Cookie": {site.TokenCookie + "=" + token}}, http.StatusOK},
		{"query once", base + "/?token=" + token, nil, http.StatusSeeOther},
		{"wrong query", base + "/?token=nope", nil, http.StatusUnauthorized},
		{"other Host with token", base + "/", http.Header{"Authorization": {"Bearer " + token}, "Host": {"results.example"}}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			code, body, hdr := get(t, c.url, c.header)
			if code != c.want {
				t.Errorf("%d, want %d", code, c.want)
			}
			if strings.Contains(body, token) || strings.Contains(hdr.Get("Location"), token) {
				t.Errorf("the token is echoed in the response")
			}
		})
	}
}

// indexProbe, put first into every HTML page the browser test serves,
// submits the index's comparison form with the first two profiles, and
// on any other page checks the charts as the report's browser test does,
// writing its findings into <pre id="probe-result">.
const indexProbe = `<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) { errors.push("error: " + e.message); });
  window.addEventListener("load", function () {
    var form = document.getElementById("compare-form");
    if (form) {
      document.getElementById("compare-a").selectedIndex = 1;
      document.getElementById("compare-b").selectedIndex = 0;
      form.submit();
      return;
    }
    var out = { location: location.pathname + location.search, charts: [], errors: errors, title: document.title };
    try {
      JSON.parse(document.getElementById("oltplab-charts").textContent).forEach(function (spec) {
        var el = document.getElementById(spec.id), cv = el && el.querySelector("canvas"), r = { id: spec.id, inked: 0 };
        out.charts.push(r);
        if (!cv || !cv.width || !cv.height) { return; }
        var px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
        for (var i = 3; i < px.length; i += 4) { if (px[i] !== 0) { r.inked++; } }
      });
    } catch (e) { errors.push("probe: " + e); }
    var pre = document.createElement("pre");
    pre.id = "probe-result";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>`

// withProbe serves h's pages with indexProbe first in <head>; the index's
// policy gains inline scripts for it (the index itself has none).
func withProbe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := rec.Body.String()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			body = strings.Replace(body, "<head>", "<head>"+indexProbe, 1)
			if csp := w.Header().Get("Content-Security-Policy"); csp != "" {
				w.Header().Set("Content-Security-Policy", csp+"; script-src 'unsafe-inline'")
			}
			w.Header().Del("Content-Length")
		}
		w.WriteHeader(rec.Code)
		io.WriteString(w, body)
	})
}

// serveInBrowser: headless Chromium opens the index, submits the
// comparison of two profiles, and on the comparison page every chart
// drew; the label with markup is text, not markup.
func serveInBrowser(t *testing.T, path string) {
	chromium := chromiumPath(t)
	dom := dumpDOM(t, chromium, probeServer(t, path)+"/")
	got := readProbe(t, dom, "the comparison page")
	t.Logf("browser ended on %s (%q) with %d charts", got.Location, got.Title, len(got.Charts))
	// Profiles are listed newest first: option 1 is profile 1, option 0 profile 2.
	if got.Location != "/compare?a=1&b=2" {
		t.Errorf("browser ended on %q, want the comparison the form submits (/compare?a=1&b=2)", got.Location)
	}
	if want := "sata (2) compared with " + servedLabel + " (1)"; got.Title != want {
		t.Errorf("comparison page title %q, want %q", got.Title, want)
	}
	if len(got.Errors) > 0 {
		t.Errorf("page errors: %q", got.Errors)
	}
	ids := map[string]bool{}
	for _, c := range got.Charts {
		ids[c.ID] = true
		if c.Inked < 1000 {
			t.Errorf("chart %s: %d inked pixels, want a drawn chart", c.ID, c.Inked)
		}
	}
	// A comparison of few steps draws its curves as grouped bars (inline
	// SVG with the chart's id) instead of a canvas.
	for _, want := range []string{"chart-nopm", "chart-tpm", "chart-ratio"} {
		bars := regexp.MustCompile(`<svg class="bars" id="` + want + `" data-bars="([1-9][0-9]*)"`)
		if !ids[want] && !bars.MatchString(dom) {
			t.Errorf("comparison page lacks chart %s, drawn or as bars (has %v)", want, ids)
		}
	}
	if strings.Contains(dom, "<i>nvme</i>") || !strings.Contains(dom, "&lt;i&gt;nvme&lt;/i&gt;") {
		t.Errorf("the label is not shown as text on the comparison page")
	}
}

// chromiumPath finds Chromium (scripts/testservers.sh installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	testenv.Require(t, testenv.Chromium)
	return testenv.ChromiumPath()
}

// dumpDOM has headless Chromium load url, follow what its scripts do for
// a while of virtual time, and print the final document.
func dumpDOM(t *testing.T, chromium, url string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1200,900", "--virtual-time-budget=10000", "--dump-dom", url)
	// Chromium forks helpers: its own process group, all ended on overrun.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s: %v\nstderr:\n%s", chromium, err, stderr.String())
	}
	return stdout.String()
}

// servedPlan is an experiment on two SQLite targets, so that its report
// has a comparison to draw.
const servedPlan = `name: served-study
warehouses: 1
build: {workers: 1}
profile:
  vus: [1, 2]
  rampup: 0s
  duration: 1s
  grace: 1s
targets:
  - name: first
    url: sqlite:first.db
  - name: second
    url: sqlite:second.db
steps: [build, profile]
`

// TestServeExperiment: an experiment run by `oltplab experiment run` is
// listed on the index, its page and JSON download are served, and in
// Chromium its page draws every chart without an error.
func TestServeExperiment(t *testing.T) {
	testenv.Require(t, testenv.Long)
	dir := t.TempDir()
	env := []string{"OLTPLAB_RESULTS=" + filepath.Join(dir, "results.db"), "HOME=" + dir}
	if r := oltplab(t, env, "experiment", "run", writePlan(t, dir, servedPlan)); r.code != 0 {
		t.Fatalf("experiment run: exit %d\n%s", r.code, r.err)
	}
	base := startServe(t, env)
	code, page, _ := get(t, base+"/", nil)
	if code != http.StatusOK || !strings.Contains(page, `href="/experiments/1"`) {
		t.Fatalf("index: %d, does not link experiment 1:\n%.2000s", code, page)
	}
	code, js, hdr := get(t, base+"/experiments/1/report.json", nil)
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("experiment JSON: %d %s", code, hdr.Get("Content-Type"))
	}
	var in struct {
		Experiment struct {
			Name    string `json:"name"`
			Targets []struct {
				Name string `json:"name"`
			} `json:"targets"`
			Sections []struct {
				Kind     string            `json:"kind"`
				Profiles []json.RawMessage `json:"profiles"`
			} `json:"sections"`
		} `json:"experiment"`
	}
	if err := json.Unmarshal([]byte(js), &in); err != nil {
		t.Fatalf("experiment JSON: %v\n%.1000s", err, js)
	}
	profiles := 0
	for _, s := range in.Experiment.Sections {
		if s.Kind == "profile" {
			profiles += len(s.Profiles)
		}
	}
	if in.Experiment.Name != "served-study" || len(in.Experiment.Targets) != 2 || profiles != 2 {
		t.Errorf("experiment JSON: name %q, %d targets, %d profiles in profile sections; want served-study, 2, 2\n%.1000s",
			in.Experiment.Name, len(in.Experiment.Targets), profiles, js)
	}

	// On a loaded host Chromium's virtual time can end before the page's
	// charts are drawn (CI at load 27 once dumped a page with none): up
	// to three loads, each a full page; the assertions below hold for the
	// last.
	url := probeServer(t, resultsPath(env)) + "/experiments/1"
	var dom string
	var got probeResult
	for attempt := 1; attempt <= 3; attempt++ {
		dom = dumpDOM(t, chromiumPath(t), url)
		got = readProbe(t, dom, "the experiment page")
		if len(got.Charts) > 0 {
			break
		}
		t.Logf("load %d of the experiment page drew no canvas chart", attempt)
	}
	t.Logf("experiment page %q: %d canvas charts", got.Title, len(got.Charts))
	if len(got.Errors) > 0 {
		t.Errorf("page errors: %q", got.Errors)
	}
	for _, c := range got.Charts {
		if c.Inked < 1000 {
			t.Errorf("chart %s: %d inked pixels, want a drawn chart", c.ID, c.Inked)
		}
	}
	bars := regexp.MustCompile(`<svg class="bars" id="chart-nopm" data-bars="([1-9][0-9]*)"`)
	if len(got.Charts) == 0 && !bars.MatchString(dom) {
		t.Errorf("experiment page draws no NOPM chart, neither on a canvas nor as bars")
	}
	if !strings.Contains(dom, "first") || !strings.Contains(dom, "second") {
		t.Errorf("experiment page does not name both targets")
	}
}

// probeServer serves the store at path through withProbe until the test
// ends and returns its URL.
func probeServer(t *testing.T, path string) string {
	t.Helper()
	st, err := store.OpenToRead(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &site.Server{Store: st, ExperimentReport: experiment.Report, Version: "test"}
	srv := httptest.NewServer(withProbe(s.Handler()))
	t.Cleanup(srv.Close)
	return srv.URL
}

// probeResult is what indexProbe wrote into a page Chromium dumped.
type probeResult struct {
	Location string   `json:"location"`
	Title    string   `json:"title"`
	Errors   []string `json:"errors"`
	Charts   []struct {
		ID    string `json:"id"`
		Inked int    `json:"inked"`
	} `json:"charts"`
}

// readProbe reads the probe's result out of dom, the dump of page.
func readProbe(t *testing.T, dom, page string) probeResult {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="probe-result">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no probe result in the dumped DOM (%s did not load?):\n%.2000s", page, dom)
	}
	var got probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatalf("probe result %q: %v", m[1], err)
	}
	return got
}
