package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/oltplab/oltplab/internal/load"
)

// isTerminal reports whether w is a terminal (an *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// plainProgressEvery is how often the non-terminal renderer prints a line
// while a phase lasts.
const plainProgressEvery = 10 * time.Second

// progressBarWidth is the number of cells of the terminal bar.
const progressBarWidth = 30

// buildProgress renders load.Progress: on a terminal one line redrawn in
// place (phase, bar, rows, rows/s, ETA); elsewhere (a log file, CI) one
// plain line at every phase change and every 10 s of build time.
// Update is called from load's progress goroutine only; it is not safe
// for concurrent use.
type buildProgress struct {
	w   io.Writer
	tty bool

	started   bool
	lastPhase load.Phase
	lastLine  time.Duration // Elapsed of the last plain line
	width     int           // length of the last terminal line, to blank leftovers
	buf       []byte
}

// newBuildProgress returns a renderer writing to w; isTerminal selects the
// redrawn single line (pass isTerminal(w) in the CLI).
func newBuildProgress(w io.Writer, isTerminal bool) *buildProgress {
	return &buildProgress{w: w, tty: isTerminal}
}

// Update renders one report.
func (b *buildProgress) Update(p load.Progress) {
	changed := !b.started || p.Phase != b.lastPhase
	b.started = true
	b.lastPhase = p.Phase
	if b.tty {
		b.redraw(p)
		return
	}
	if changed || p.Elapsed-b.lastLine >= plainProgressEvery {
		b.lastLine = p.Elapsed
		line := b.describe(p, false)
		_, _ = io.WriteString(b.w, line+"\n")
	}
}

// Finish ends the terminal line so that what follows starts on a fresh one.
func (b *buildProgress) Finish() {
	if b.tty && b.started {
		_, _ = io.WriteString(b.w, "\n")
		b.width = 0
	}
}

func (b *buildProgress) redraw(p load.Progress) {
	line := b.describe(p, true)
	b.buf = append(b.buf[:0], '\r')
	b.buf = append(b.buf, line...)
	if pad := b.width - len(line); pad > 0 {
		b.buf = append(b.buf, strings.Repeat(" ", pad)...)
	}
	b.width = len(line)
	_, _ = b.w.Write(b.buf)
}

// describe is the text of one report; bar adds the terminal bar. Before
// the load phase there are no rows to count, so only the phase and the
// time show; during it, the rows against the expected count (an estimate:
// ORDER_LINE is counted at its mean, so the share stops at 99.9% until
// the load ends); after it, the rows loaded and the load rate.
func (b *buildProgress) describe(p load.Progress, bar bool) string {
	var s strings.Builder
	fmt.Fprintf(&s, "build %-10s", p.Phase)
	switch {
	case p.Phase < load.PhaseLoad:
	case p.Phase == load.PhaseLoad:
		frac := 0.0
		if p.ExpectedRows > 0 {
			frac = min(float64(p.Rows)/float64(p.ExpectedRows), 0.999)
		}
		if bar {
			filled := int(frac * progressBarWidth)
			s.WriteString(" [")
			s.WriteString(strings.Repeat("#", filled))
			s.WriteString(strings.Repeat(".", progressBarWidth-filled))
			s.WriteString("]")
		}
		fmt.Fprintf(&s, " %5.1f%% %s of about %s rows", 100*frac, thousands(float64(p.Rows)), thousands(float64(p.ExpectedRows)))
		if p.RowsPerSec > 0 {
			fmt.Fprintf(&s, ", %s rows/s", thousands(p.RowsPerSec))
		}
		if p.ETA > 0 {
			fmt.Fprintf(&s, ", ETA %s", clockDuration(p.ETA))
		}
	default:
		fmt.Fprintf(&s, " %s rows loaded", thousands(float64(p.Rows)))
		if p.RowsPerSec > 0 {
			fmt.Fprintf(&s, " (%s rows/s)", thousands(p.RowsPerSec))
		}
	}
	if p.Phase < load.PhaseLoad {
		fmt.Fprintf(&s, " elapsed %s", clockDuration(p.Elapsed))
	} else {
		fmt.Fprintf(&s, ", elapsed %s", clockDuration(p.Elapsed))
	}
	return s.String()
}

// clockDuration formats d as m:ss or h:mm:ss, rounded to the second.
func clockDuration(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	h, m, s := sec/3600, sec/60%60, sec%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
