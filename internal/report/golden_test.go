package report

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func TestGolden(t *testing.T) {
	writers := []struct {
		name  string
		write func(io.Writer, Input) error
		in    Input
	}{
		{"fixture.md", Markdown, fixture()},
		{"fixture.csv", CSV, fixture()},
		{"experiment.md", Markdown, experimentFixture()},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := w.write(&buf, w.in); err != nil {
				t.Fatalf("render %s: %v", w.name, err)
			}
			path := filepath.Join("testdata", w.name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatalf("update golden: %v", err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run with -update to create it): %v", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("%s differs from %s (run go test ./internal/report/ -update after checking the change):\n%s",
					w.name, path, firstDiff(got, string(want)))
			}
		})
	}
}

// firstDiff shows the first differing line of got and want.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(no line differs)"
}
