package sysstat

import (
	"os"
	"testing"
)

// TestParseProc: the command name may hold spaces and parentheses; the
// fields after it are counted from the last parenthesis.
func TestParseProc(t *testing.T) {
	line := "4242 (postgres: oltplab (x)) S 4200 4200 4200 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 1 0 123456 0 0"
	p, err := ParseProc(line)
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 4242 || p.PPID != 4200 || p.Comm != "postgres: oltplab (x)" || p.State != 'S' ||
		p.UTime != 250 || p.STime != 50 || p.CUTime != 7 || p.CSTime != 3 || p.StartTime != 123456 {
		t.Errorf("ParseProc = %+v", p)
	}
	if got := p.CPUSeconds(); got != 3.1 {
		t.Errorf("CPUSeconds = %g, want 3.1", got)
	}
	if _, err := ParseProc("12 no name"); err == nil {
		t.Error("a line without a command name parsed")
	}
}

// TestTreeCPUSeconds: this test's own process is a tree of at least
// itself; a wrong start time is a process that is gone.
func TestTreeCPUSeconds(t *testing.T) {
	self, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	got, err := TreeCPUSeconds(self.PID, self.StartTime)
	if err != nil || got < self.CPUSeconds() {
		t.Errorf("TreeCPUSeconds(self) = %g, %v; want at least its own %g", got, err, self.CPUSeconds())
	}
	if _, err := TreeCPUSeconds(self.PID, self.StartTime+1); err == nil {
		t.Error("a process with another start time was taken for the same")
	}
}
