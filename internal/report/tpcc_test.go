package report

import (
	"bytes"
	"strings"
	"testing"
)

// tpccFixture is the fixture with a tpc-c profile added: one run whose
// every check passed (tpmC) and one with 50 terminals on 10 warehouses
// whose Stock-Level exceeded its limit.
func tpccFixture() Input {
	in := fixture()
	checks := func(terminals float64, slP90 float64) []TPCCCheck {
		return []TPCCCheck{
			{Name: "terminals", Clause: "4.2.2", Value: terminals, Limit: 100, Unit: "terminals", Pass: terminals == 100},
			{Name: "response_time_p90_new_order", Clause: "5.2.5.7", Value: 0.012, Limit: 5, Unit: "s", Pass: true},
			{Name: "response_time_p90_stock_level", Clause: "5.2.5.7", Value: slP90, Limit: 20, Unit: "s", Pass: slP90 <= 20},
			{Name: "deferred_delivery_p90", Clause: "2.7.2, 5.2.5.7", Value: 0.05, Limit: 80, Unit: "s", Pass: true},
		}
	}
	tpmC := 1240.4
	p := Profile{ID: 3, Label: "paced", Target: "sqlite:tpcc.db", Dialect: "sqlite", Mode: "tpc-c (keying and think times, deferred Delivery)"}
	p.Steps = append(p.Steps, NewStep(100, []Repeat{{RunID: 301, NOPM: 1230, TPM: 2850, TPCC: &TPCC{Terminals: 100,
		NewOrdersPerMinute: tpmC, MaxNewOrdersPerMinute: 1260.5, EfficiencyPct: 98.4, TpmC: &tpmC, Checks: checks(100, 0.4)}}}, nil))
	p.Steps = append(p.Steps, NewStep(50, []Repeat{{RunID: 302, NOPM: 600, TPM: 1400, TPCC: &TPCC{Terminals: 50,
		NewOrdersPerMinute: 610, MaxNewOrdersPerMinute: 630.3, EfficiencyPct: 96.8, Checks: checks(50, 21.5)}}}, nil))
	in.Profiles = append(in.Profiles, p)
	return in
}

func TestTPCCTable(t *testing.T) {
	if got := newView(fixture()).tpccTable(); len(got.Header) != 0 {
		t.Errorf("tproc-c profiles only: got a TPC-C table %q, want none", got.Header)
	}
	tab := newView(tpccFixture()).tpccTable()
	want := []string{"Profile", "Terminals", "Run", "New-Orders/min", "Maximum", "of maximum", "tpmC",
		"new_order p90", "stock_level p90", "deferred_delivery p90", "Failed checks"}
	if strings.Join(tab.Header, "|") != strings.Join(want, "|") {
		t.Fatalf("header %q, want %q", tab.Header, want)
	}
	if len(tab.Rows) != 2 {
		t.Fatalf("got %d rows, want one per tpc-c run (2)", len(tab.Rows))
	}
	cellsOf := func(r row) []string {
		var s []string
		for _, c := range r.Cells {
			s = append(s, c.Text)
		}
		return s
	}
	bad, ok := cellsOf(tab.Rows[0]), cellsOf(tab.Rows[1]) // by terminals
	if ok[6] != "1,240" || ok[10] != "" {
		t.Errorf("conforming run: tpmC %q, failed %q; want 1,240 and none", ok[6], ok[10])
	}
	if bad[6] != "not tpmC" || bad[8] != "21.500 FAIL" || bad[10] != "terminals, response_time_p90_stock_level" {
		t.Errorf("failing run: tpmC %q, stock_level %q, failed %q", bad[6], bad[8], bad[10])
	}
	if !tab.Rows[0].Cells[8].Bad || tab.Rows[1].Cells[8].Bad {
		t.Error("only the exceeded limit is marked bad")
	}
	var md bytes.Buffer
	if err := Markdown(&md, tpccFixture()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## TPC-C checks") {
		t.Error("the Markdown report has no TPC-C checks section")
	}
}
