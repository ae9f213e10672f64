package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/load"
)

// buildReports is a build as load reports it: every 500 ms during a 25 s
// load, then two quick phases.
func buildReports() []load.Progress {
	const expected = 1_000_000
	var ps []load.Progress
	ps = append(ps, load.Progress{Phase: load.PhaseCreate, ExpectedRows: expected})
	for e := 500 * time.Millisecond; e <= 25*time.Second; e += 500 * time.Millisecond {
		rows := int64(expected) * int64(e) / int64(25*time.Second)
		ps = append(ps, load.Progress{Phase: load.PhaseLoad, Rows: rows, ExpectedRows: expected, Elapsed: e,
			RowsPerSec: 40000, ETA: 25*time.Second - e})
	}
	ps = append(ps,
		load.Progress{Phase: load.PhaseIndex, Rows: expected, ExpectedRows: expected, Elapsed: 25*time.Second + time.Millisecond, RowsPerSec: 40000},
		load.Progress{Phase: load.PhaseDone, Rows: expected, ExpectedRows: expected, Elapsed: 27 * time.Second, RowsPerSec: 40000},
	)
	return ps
}

func TestBuildProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	r := newBuildProgress(&buf, false)
	for _, p := range buildReports() {
		r.Update(p)
	}
	r.Finish()
	out := buf.String()
	if strings.Contains(out, "\r") {
		t.Errorf("plain output holds a carriage return: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// create, load at 0.5 s (phase change), 10.5 s, 20.5 s, index, done.
	if got, want := len(lines), 6; got != want {
		t.Fatalf("got %d lines, want %d:\n%s", got, want, out)
	}
	for i, want := range []string{"build create", "build load", "build load", "build load", "build index", "build done"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: got %q, want prefix %q", i, lines[i], want)
		}
	}
	if got, want := lines[1], "ETA 0:25"; !strings.Contains(got, want) {
		t.Errorf("first load line %q lacks %q", got, want)
	}
	if got, want := lines[4], "build index      1,000,000 rows loaded (40,000 rows/s)"; !strings.HasPrefix(got, want) {
		t.Errorf("index line %q lacks %q", got, want)
	}
}

// TestBuildProgressOutsideTheLoad: the phases before the load showed
// "0.0% 0/1098022 rows" each, and the ones after it "100.0%
// 1099090/1098022 rows" (order lines are drawn, the expected count is
// their mean). Before the load only the phase shows; during it the share
// stops short of 100%; after it the rows loaded show, without a share.
func TestBuildProgressOutsideTheLoad(t *testing.T) {
	var buf bytes.Buffer
	r := newBuildProgress(&buf, false)
	for _, p := range []load.Progress{
		{Phase: load.PhaseCheck, ExpectedRows: 1098022},
		{Phase: load.PhaseCreate, ExpectedRows: 1098022},
		{Phase: load.PhaseLoad, Rows: 1099000, ExpectedRows: 1098022, Elapsed: 9 * time.Second, RowsPerSec: 120000},
		{Phase: load.PhaseIndex, Rows: 1099090, ExpectedRows: 1098022, Elapsed: 10 * time.Second, RowsPerSec: 110000},
	} {
		r.Update(p)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4:\n%s", len(lines), buf.String())
	}
	for _, l := range lines[:2] {
		if strings.Contains(l, "%") || strings.Contains(l, "rows") || strings.Contains(l, ",") {
			t.Errorf("line before the load shows rows or a stray comma: %q", l)
		}
	}
	if got, want := lines[2], "99.9% 1,099,000 of about 1,098,022 rows"; !strings.Contains(got, want) {
		t.Errorf("load line %q lacks %q", got, want)
	}
	if got := lines[3]; strings.Contains(got, "%") || !strings.Contains(got, "1,099,090 rows loaded") {
		t.Errorf("line after the load %q: want the rows loaded, no share", got)
	}
}

func TestBuildProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	r := newBuildProgress(&buf, true)
	reports := buildReports()
	for _, p := range reports {
		r.Update(p)
	}
	r.Finish()
	out := buf.String()
	if got, want := strings.Count(out, "\r"), len(reports); got != want {
		t.Errorf("got %d redraws, want one per report (%d)", got, want)
	}
	if got, want := strings.Count(out, "\n"), 1; got != want {
		t.Errorf("got %d newlines, want %d (only Finish ends the line)", got, want)
	}
	redraws := strings.Split(strings.TrimSuffix(out, "\n"), "\r")[1:]
	half := redraws[25] // load at 12.5 s of 25
	if got, want := half, "["+strings.Repeat("#", 15)+strings.Repeat(".", 15)+"]"; !strings.Contains(got, want) {
		t.Errorf("half-way line %q lacks bar %q", got, want)
	}
	if got, want := half, "rows/s"; !strings.Contains(got, want) {
		t.Errorf("half-way line %q lacks %q", got, want)
	}
	if got, want := half, "ETA 0:12"; !strings.Contains(got, want) && !strings.Contains(got, "ETA 0:13") {
		t.Errorf("half-way line %q lacks %q", got, want)
	}
	// A shorter line after a longer one is padded so no old text remains.
	for i := 1; i < len(redraws); i++ {
		if got, prev := len(redraws[i]), len(strings.TrimRight(redraws[i-1], " ")); got < prev {
			t.Errorf("redraw %d is %d wide, shorter than the previous text (%d): leftovers would show", i, got, prev)
		}
	}
}

func TestClockDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0:00"},
		{1499 * time.Millisecond, "0:01"},
		{61 * time.Second, "1:01"},
		{3*time.Hour + 2*time.Minute + 5*time.Second, "3:02:05"},
	} {
		t.Run(c.d.String(), func(t *testing.T) {
			if got := clockDuration(c.d); got != c.want {
				t.Errorf("clockDuration(%s) = %q, want %q", c.d, got, c.want)
			}
		})
	}
}
