package report

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wideFixture is the experiment fixture with five targets whose
// recorded context holds what real ones do: long command lines, paths,
// settings lists and checksums without a space to break at.
func wideFixture() Input {
	in := experimentFixture()
	e := in.Experiment
	for _, name := range []string{"nvme-raid10-xfs", "sata-ssd-ext4"} {
		t := e.Targets[0]
		t.Name, t.Display = name, "postgres on /mnt/"+name+" (managed)"
		e.Targets = append(e.Targets, t)
	}
	for i := range e.Targets {
		t := &e.Targets[i]
		full := map[string]string{}
		for k, v := range t.FullContext {
			full[k] = v
		}
		dir := "/var/lib/oltplab/instances/storage-tiers-" + t.Name + "-2026-11-28T04-11-17Z/data"
		full["instance.command"] = "/usr/lib/postgresql/15/bin/postgres -D " + dir + " -c config_file=" + dir + "/postgresql.conf -c listen_addresses=127.0.0.1 -c port=" + strconv.Itoa(54320+i)
		full["instance.data_dir"] = dir
		full["instance.wal_dir"] = dir + "/pg_wal_on_a_separate_device_" + t.Name
		full["database.settings.shared_preload_libraries"] = "pg_stat_statements,auto_explain,pg_wait_sampling,pg_prewarm,pg_buffercache"
		full["tool.binary_sha256"] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" + strconv.Itoa(i)
		full["host.kernel"] = "Linux 6.1.0-27-cloud-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01) x86_64 GNU/Linux"
		full["storage.mount_options"] = "rw,noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k,sunit=512,swidth=2048,noquota"
		t.FullContext = full
	}
	return in
}

// fitScript measures, once the page has loaded, every element that
// reaches past the window's right edge and every table wider than its
// container, and writes them as JSON into <pre id="fit-result">.
const fitScript = `<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var out = { inner: window.innerWidth, page: document.documentElement.scrollWidth, over: [], tables: 0 };
    function name(el) {
      var id = el.id || (el.closest("[id]") || {}).id || "";
      return el.tagName.toLowerCase() + (id ? "#" + id : "");
    }
    document.querySelectorAll("table").forEach(function (t) {
      out.tables++;
      var c = t.parentElement;
      if (t.scrollWidth > c.clientWidth + 1) { out.over.push(name(t) + ": " + t.scrollWidth + " px wide in a container of " + c.clientWidth); }
    });
    document.querySelectorAll("main *").forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > window.innerWidth + 1) { out.over.push(name(el) + ": right edge at " + Math.round(r.right) + " px"); }
    });
    var pre = document.createElement("pre");
    pre.id = "fit-result";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 0);
});
</script>`

type fitResult struct {
	Inner  int      `json:"inner"`
	Page   int      `json:"page"`
	Over   []string `json:"over"`
	Tables int      `json:"tables"`
}

// chromiumRun runs headless Chromium with args in its own process group
// (ended whole if it overruns) and returns its standard output.
func chromiumRun(t *testing.T, chromium, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir=" + filepath.Join(dir, "profile")}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s: %v\nstderr:\n%s", chromium, err, tail(stderr.String(), 3000))
	}
	return stdout.Bytes()
}

// measureFit opens page in Chromium at width CSS pixels and returns what
// reaches past the window's edge.
func measureFit(t *testing.T, chromium, page string, width int) fitResult {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	page = strings.Replace(page, "</head>", fitScript+"\n</head>", 1)
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out := chromiumRun(t, chromium, dir, fmt.Sprintf("--window-size=%d,900", width), "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	m := regexp.MustCompile(`(?s)<pre id="fit-result">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no fit result in the dumped DOM")
	}
	var got fitResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestReportFitsThePage: a study report of five targets with long
// recorded values (the appendix's context grid is the widest table)
// fits a 1,000 px window: no table is wider than its container and
// nothing reaches past the window's edge; with the print stylesheet at
// the width of an A4 page's printable area (718 CSS px) neither; and
// printed to PDF by Chromium, its pages are drawn at the normal scale
// (Chromium shrinks a page whose content is wider than the paper, and
// cuts off what is wider still).
func TestReportFitsThePage(t *testing.T) {
	chromium := findChromium(t)
	var buf bytes.Buffer
	if err := HTML(&buf, wideFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, "tool.binary_sha256") {
		t.Fatalf("the appendix does not list the fixture's context")
	}
	if !strings.Contains(page, "@media print {") {
		t.Fatalf("the page has no print stylesheet to measure")
	}
	var profiles bytes.Buffer
	if err := HTML(&profiles, fixture()); err != nil {
		t.Fatal(err)
	}
	profilesPage := profiles.String()
	for _, c := range []struct {
		name  string
		page  string
		width int
	}{
		{"screen 1000 px", page, 1000},
		{"print stylesheet at A4 width", strings.Replace(page, "@media print {", "@media all {", 1), 718},
		{"profiles report at 1000 px", profilesPage, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := measureFit(t, chromium, c.page, c.width)
			t.Logf("window %d px, page %d px wide, %d tables", got.Inner, got.Page, got.Tables)
			if got.Tables < 5 {
				t.Fatalf("measured %d tables, want the report's", got.Tables)
			}
			if got.Page > got.Inner {
				t.Errorf("the page is %d px wide in a window of %d px", got.Page, got.Inner)
			}
			for i, o := range got.Over {
				if i == 20 {
					t.Errorf("... and %d more", len(got.Over)-20)
					break
				}
				t.Errorf("cut off at the window's edge: %s", o)
			}
		})
	}
	t.Run("pdf", func(t *testing.T) {
		dir := t.TempDir()
		file, pdf := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		chromiumRun(t, chromium, dir, "--virtual-time-budget=5000", "--no-pdf-header-footer", "--print-to-pdf="+pdf, "file://"+file)
		b, err := os.ReadFile(pdf)
		if err != nil {
			t.Fatal(err)
		}
		scales := pdfPageScales(t, b)
		t.Logf("%d pages drawn at scales %v", len(scales), scales)
		if len(scales) < 5 {
			t.Fatalf("%d page content streams with a scale, want one per page of the report", len(scales))
		}
		for i, s := range scales {
			// CSS pixels to points: 72/96.
			if s < 0.75*0.99 {
				t.Errorf("page %d drawn at %.3f, want 0.75 (1 CSS px = 0.75 pt): its content was wider than the paper", i+1, s)
			}
		}
	})
}

// pdfPageScales reads a PDF that Chromium (Skia) wrote: each page's
// content stream starts with the transform from its device units (300
// per inch) to points, then, past the margins' clip, the one from CSS
// pixels to device units; their product is the page's scale from CSS
// pixels to points: 0.75 as printed, less when Chromium shrank a page
// whose content was wider than the paper.
func pdfPageScales(t *testing.T, b []byte) []float64 {
	t.Helper()
	var out []float64
	stream := regexp.MustCompile(`(?s)/FlateDecode.*?>>\s*stream\r?\n`)
	cm := regexp.MustCompile(`([-0-9.]+) 0 0 [-0-9.]+ [-0-9.]+ [-0-9.]+ cm`)
	for _, loc := range stream.FindAllIndex(b, -1) {
		r, err := zlib.NewReader(bytes.NewReader(b[loc[1]:]))
		if err != nil {
			continue
		}
		head := make([]byte, 300)
		n, _ := io.ReadFull(r, head)
		ms := cm.FindAllSubmatch(head[:n], 2)
		if len(ms) < 2 {
			continue // not a page's content (an image, a font, a form)
		}
		scale := 1.0
		for _, m := range ms {
			x, err := strconv.ParseFloat(string(m[1]), 64)
			if err != nil {
				t.Fatalf("transform %q: %v", m[0], err)
			}
			scale *= x
		}
		out = append(out, scale)
	}
	return out
}
