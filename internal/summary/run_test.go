package summary

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeRun: a run summary stored by any version of oltplab
// stays readable. testdata/run-summary-v*.json are summaries as stored
// (a 3-second SQLite run); each is decoded and its figures compared.
func TestDecodeRun(t *testing.T) {
	cases := []struct {
		file     string
		version  int
		embedded bool
	}{
		{"run-summary-v0.json", 0, false}, // before the version was recorded
		{"run-summary-v1.json", 1, true},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			s, err := DecodeRun(raw)
			if err != nil {
				t.Fatalf("DecodeRun: %v", err)
			}
			r := s.Result
			type figures struct {
				Version            int
				NOPM, TPM          float64
				NewOrders, Tx      int64
				Kinds              int
				NewOrdersCompleted int64
				VUs                int
				Style              string
				Seconds            int
				Device             string
				Series             int
				EmbeddedDatabase   bool
				AuditFigures       int
			}
			got := figures{Version: s.Version, NOPM: r.NOPM, TPM: r.TPM, NewOrders: r.DBNewOrders, Tx: r.DBTransactions,
				Kinds: len(r.Kinds), VUs: r.Options.VUs, Style: r.Options.Style.String(), Series: len(r.Series),
				EmbeddedDatabase: r.EmbeddedDatabase, AuditFigures: len(r.AuditFigures)}
			if len(r.Kinds) > 0 {
				got.NewOrdersCompleted = r.Kinds[0].Completed
			}
			if s.Monitor != nil {
				got.Seconds = s.Monitor.Seconds
				if len(s.Monitor.Devices) > 0 {
					got.Device = s.Monitor.Devices[0].Device
				}
			}
			want := figures{Version: c.version, NOPM: 5434.7979632188835, TPM: 11964.518593020326, NewOrders: 273, Tx: 601,
				Kinds: 5, NewOrdersCompleted: 275, VUs: 2, Style: "client-sql", Seconds: 3, Device: "vda", Series: 3,
				EmbeddedDatabase: c.embedded, AuditFigures: 12}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestRunRoundTrip: what a run stores today decodes to the same
// values, with today's version.
func TestRunRoundTrip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "run-summary-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeRun(raw)
	if err != nil {
		t.Fatal(err)
	}
	raw, err = json.Marshal(Run{Version: RunVersion, Result: s.Result, Monitor: s.Monitor})
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeRun(raw)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != RunVersion || !reflect.DeepEqual(again.Result, s.Result) || !reflect.DeepEqual(again.Monitor, s.Monitor) {
		t.Errorf("round trip changed the summary:\n got %+v\nwant %+v", again, s)
	}
}

// TestDecodeNewerRun: a summary of a format this oltplab does not
// know is refused, not misread.
func TestDecodeNewerRun(t *testing.T) {
	raw, err := json.Marshal(map[string]any{"summary_version": RunVersion + 1, "nopm": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeRun(raw)
	if err == nil || !strings.Contains(err.Error(), "newer oltplab") {
		t.Errorf("DecodeRun(version %d) = %v, want an error about a newer oltplab", RunVersion+1, err)
	}
}
