package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/report"
)

// TestCompareListsEveryRunParameter: compare lists every run parameter
// of the profiles, the ones that shape the load first, and marks those
// that differ: the execution style (procedures or --client-sql), the
// mode, the rate and the terminals were missing from "what differs".
// The host's and database's context that differs follows apart.
func TestCompareListsEveryRunParameter(t *testing.T) {
	prof := func(id int64, label string, ctx map[string]string) report.Profile {
		return report.Profile{ID: id, Label: label, Context: ctx,
			Steps: []report.Step{{VUs: 10}}}
	}
	a := prof(1, "procs", map[string]string{"param.style": "procedures", "param.mode": "tproc-c", "param.vus": "[10]",
		"param.warehouses": "1", "param.seed": "1", "database.version": "15.1", "host.cpus": "2"})
	b := prof(2, "paced", map[string]string{"param.style": "client-sql", "param.mode": "tpc-c", "param.terminals": "[10]",
		"param.rate_per_vu": "5", "param.warehouses": "1", "param.seed": "2", "database.version": "15.2", "host.cpus": "2"})
	var out bytes.Buffer
	if err := compareText(&out, report.Input{Profiles: []report.Profile{a, b}}, noColour); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		`\* mode +tproc-c +tpc-c`,
		`\* style +procedures +client-sql`,
		`\* vus +\[10\] +-`,
		`\* terminals +- +\[10\]`,
		`\* rate_per_vu +- +5`,
		`\n  warehouses +1 +1`, // the same on both, listed unmarked
		`database.version +15.1 +15.2`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("compare output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "seed") || strings.Contains(text, "host.cpus") {
		t.Errorf("compare lists the seed or a context key that does not differ:\n%s", text)
	}
	if i, j := strings.Index(text, "* mode"), strings.Index(text, "warehouses"); i > j {
		t.Errorf("mode comes after warehouses:\n%s", text)
	}
}
