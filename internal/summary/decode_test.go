package summary

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
)

// stored are summaries as oltplab stored them, one of each kind (the
// SQLite runs of a store written by `oltplab build`, `check`, `run`,
// `monitor`, `storage bench`, `backup`, `rebuild`, `cpu`, `parallel` and
// `neighbours` before this package existed), with the headline each
// gives.
var stored = []struct {
	file     string
	kind     store.Kind
	headline string
}{
	{"build-summary-v0.json", store.KindBuild, "1 warehouse(s), 599543 rows in 5.4 s"},
	{"check-summary-v0.json", store.KindCheck, "all conditions passed"},
	{"run-summary-v1-tpcc.json", store.KindRun, "New-Orders/min 0 (not tpmC: checks failed, 0.0% of 13), NOPM 0, TPM 20"},
	{"monitor-summary-v0.json", store.KindMonitor, ""},
	{"storage-summary-v0.json", store.KindStorage, "seq-read-128k read 5869 IOPS; oltp-4k-qd8 read 29087 IOPS, write 12459 IOPS"},
	{"backup-summary-v0.json", store.KindBackup, "2 backup(s): 0.8 s, 171.5 MB/s; restore 0.3 s, 356.5 MB/s"},
	{"rebuild-summary-v0.json", store.KindRebuild, "sqlite_autoindex_order_line_1: warm 1.14 s"},
	{"cpu-summary-v0.json", store.KindCPU, "server 254.4 k rounds/s, client 95.86 M rounds/s"},
	{"parallel-summary-v0.json", store.KindParallel, "total NOPM 21,284, TPM 49,317 over 2 target(s); windows 4 ms apart"},
	{"neighbours-summary-v0.json", store.KindNeighbours, "victims' NOPM while backups ran: a lost 13.2%, b lost 22.3%; " +
		"against the baseline phase: a lost 32.8% (interval too wide to conclude), b lost 25.8%; 2 backup(s), 1.5 s on average"},
	{"tpch-build-summary-v0.json", store.KindTPCHBuild, "TPC-H SF 0.01, 86805 rows in 15.4 s (load 1.7 s)"},
	{"tpch-check-summary-v0.json", store.KindTPCHCheck, "TPC-H SF 0.01: all 18 checks passed"},
	{"tpch-summary-v0.json", store.KindTPCH, "TPROC-H SF 0.01 performance test: Power@Size 282.5, Throughput@Size 377.1 (2 streams), QphH@Size 326.4"},
}

// TestStoredSummariesUnchanged: every kind's stored summary decodes into
// its type and encodes back to the very bytes oltplab stored, so nothing
// stored is lost or changed by reading it, and what scenario writes
// through these types is what it wrote before; each gives its headline.
func TestStoredSummariesUnchanged(t *testing.T) {
	for _, c := range stored {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Decode(c.kind, raw)
			if err != nil {
				t.Fatalf("Decode(%s): %v", c.kind, err)
			}
			again, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("encoded again, the summary differs from the stored one:\n got %s\nwant %s", again, raw)
			}
			if got := s.Headline(); got != c.headline {
				t.Errorf("headline: got %q, want %q", got, c.headline)
			}
			if m := s.Sampling(); (m != nil) != strings.Contains(string(raw), `"monitor":`) {
				t.Errorf("Sampling() = %v, but the summary's monitor is %v", m != nil, strings.Contains(string(raw), `"monitor":`))
			}
		})
	}
}

// TestDecodeNewer: a summary of any kind written in a newer format than
// this oltplab knows is refused, not misread.
func TestDecodeNewer(t *testing.T) {
	for _, k := range []store.Kind{store.KindBuild, store.KindRun, store.KindCheck, store.KindMonitor, store.KindStorage,
		store.KindBackup, store.KindRebuild, store.KindCPU, store.KindParallel, store.KindNeighbours,
		store.KindTPCHBuild, store.KindTPCHCheck, store.KindTPCH} {
		raw, err := json.Marshal(map[string]any{"summary_version": versions[k] + 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(k, raw); err == nil || !strings.Contains(err.Error(), "newer oltplab") {
			t.Errorf("%s: Decode(version %d) = %v, want an error about a newer oltplab", k, versions[k]+1, err)
		}
	}
	if _, err := Decode("nonsense", []byte(`{}`)); err == nil {
		t.Error("a kind oltplab does not know decoded")
	}
}

// TestDecodeError: a summary that does not decode gives no Summary.
func TestDecodeError(t *testing.T) {
	for _, k := range []store.Kind{store.KindRun, store.KindRebuild} {
		if s, err := Decode(k, []byte(`{"phases": 3, "nopm": "x"}`)); err == nil || s != nil {
			t.Errorf("%s: Decode of a wrong summary = %v, %v; want nil and an error", k, s, err)
		}
	}
}
