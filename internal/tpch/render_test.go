package tpch

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/queries/*.sql from the current output")

// TestRenderGolden renders the 22 queries with the validation parameters
// at SF 1 in the standard flavor and compares them with testdata.
func TestRenderGolden(t *testing.T) {
	s, _ := ParseScale("1")
	for q := 1; q <= Queries; q++ {
		p, err := ValidationParams(q, s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Render(StandardSQL{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, st := range r.Setup {
			b.WriteString(st + ";\n\n")
		}
		b.WriteString(r.Text + ";\n")
		for _, st := range r.Teardown {
			b.WriteString("\n" + st + ";\n")
		}
		path := filepath.Join("testdata", "queries", fmt.Sprintf("q%02d.sql", q))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./internal/tpch -run RenderGolden -update writes it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("Q%d differs from %s:\n%s", q, path, b.String())
		}
	}
}

// markerFlavor writes every construct as a marker, so that a test can
// see that no vendor construct bypasses the flavor.
type markerFlavor struct{}

func (markerFlavor) Date(iso string) string { return "<D " + iso + ">" }
func (markerFlavor) DateAdd(iso string, n int, u Unit) string {
	return fmt.Sprintf("<A %s %+d %s>", iso, n, u)
}
func (markerFlavor) Year(expr string) string { return "<Y " + expr + ">" }
func (markerFlavor) Substring(expr string, from, length int) string {
	return fmt.Sprintf("<S %s %d %d>", expr, from, length)
}
func (markerFlavor) Decimal(expr string) string { return "<N " + expr + ">" }
func (markerFlavor) Limit(n int) string         { return fmt.Sprintf("<L %d>", n) }

func TestRenderUsesFlavor(t *testing.T) {
	s, _ := ParseScale("1")
	limits := map[int]int{2: 100, 3: 10, 10: 20, 18: 100, 21: 100}
	for q := 1; q <= Queries; q++ {
		p, _ := ValidationParams(q, s)
		r, err := p.Render(markerFlavor{}, 7)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(append(append(append([]string{}, r.Setup...), r.Text), r.Teardown...), "\n")
		for _, word := range []string{"date '", "interval", "extract", "substring", "limit", ":1", "[["} {
			if strings.Contains(strings.ToLower(all), word) {
				t.Errorf("Q%d: %q outside the flavor:\n%s", q, word, all)
			}
		}
		if n, ok := limits[q]; ok != strings.Contains(r.Text, "<L ") || (ok && !strings.HasSuffix(r.Text, fmt.Sprintf("<L %d>", n))) {
			t.Errorf("Q%d: want a final limit of %d rows (%v):\n%s", q, n, ok, r.Text)
		}
		if q == 15 {
			if len(r.Setup) != 1 || len(r.Teardown) != 1 || !strings.Contains(r.Text, "revenue7") ||
				!strings.HasPrefix(r.Setup[0], "create view revenue7") || r.Teardown[0] != "drop view revenue7" {
				t.Errorf("Q15 of stream 7: %q / %q / %q", r.Setup, r.Text, r.Teardown)
			}
		} else if len(r.Setup)+len(r.Teardown) > 0 {
			t.Errorf("Q%d has setup or teardown statements", q)
		}
	}
	p, _ := ValidationParams(1, s)
	r, _ := p.Render(markerFlavor{}, 0)
	if !strings.Contains(r.Text, "<A 1998-12-01 -90 day>") {
		t.Errorf("Q1's date: %s", r.Text)
	}
}

func TestRenderErrors(t *testing.T) {
	for _, p := range []Params{{Query: 0}, {Query: 23}, {Query: 1, Values: nil}, {Query: 16, Values: []string{"a"}}} {
		if _, err := p.Render(StandardSQL{}, 0); err == nil {
			t.Errorf("Render(%v) has no error", p)
		}
	}
}
