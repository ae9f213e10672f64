package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Writer is the process that created a run or profile: its process id,
// host name and start (the kernel's boot id and the process's start time
// in clock ticks since boot, so a reused process id or a reboot is not
// taken for the same process). A row left "running" whose writer is gone
// from this host is abandoned: its process was killed or crashed.
type Writer struct {
	PID     int
	Host    string
	Started string // "" where the platform does not tell (not Linux)
}

// procRoot is where /proc is; tests point it at captured files.
var procRoot = "/proc"

// currentWriter describes this process.
func currentWriter() Writer {
	w := Writer{PID: os.Getpid()}
	w.Host, _ = os.Hostname()
	w.Started, _ = processStart(w.PID)
	return w
}

// processStart returns the start identity of a process: "" and an error
// wrapping fs.ErrNotExist when there is no such process.
func processStart(pid int) (string, error) {
	bootID, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "", fmt.Errorf("read boot id: %w", err)
	}
	f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := ParseProcStat(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("process %d: %w", pid, err)
	}
	if st.State == 'Z' || st.State == 'X' {
		// Ended; only its exit status waits for its parent.
		return "", fmt.Errorf("process %d has ended: %w", pid, os.ErrNotExist)
	}
	return fmt.Sprintf("%s/%d", bytes.TrimSpace(bootID), st.StartTicks), nil
}

// ProcStat is what the store reads of /proc/PID/stat.
type ProcStat struct {
	State      byte   // field 3: R, S, D, Z (zombie), X (dead), ...
	StartTicks uint64 // field 22: start time in clock ticks after boot
}

// ParseProcStat parses a /proc/PID/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so fields
// are counted after the last ')'.
func ParseProcStat(r io.Reader) (ProcStat, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return ProcStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, errors.New("stat line has no command name")
	}
	fields := bytes.Fields(b[i+1:])
	const state, startTime = 3 - 3, 22 - 3 // fields after the name start with field 3
	if len(fields) <= startTime {
		return ProcStat{}, fmt.Errorf("stat line has %d fields after the command name, want at least %d", len(fields), startTime+1)
	}
	if len(fields[state]) != 1 {
		return ProcStat{}, fmt.Errorf("process state %q is not one letter", fields[state])
	}
	v, err := strconv.ParseUint(string(fields[startTime]), 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("start time %q: %w", fields[startTime], err)
	}
	return ProcStat{State: fields[state][0], StartTicks: v}, nil
}

// gone reports whether the writer w, of this host, has ended. Without a
// start identity (another platform) it cannot tell and says no.
// WriterGone reports whether w, the writer of a running row, was a
// process of this host that has ended (killed, crashed) without finishing
// it. A writer on another host is never known gone: its row stays
// running until that host's oltplab opens the store.
func (s *Store) WriterGone(w Writer) bool {
	return w.PID != 0 && w.Host == s.writer.Host && s.gone(w)
}

func (s *Store) gone(w Writer) bool {
	if w.Started == "" || s.writer.Started == "" {
		return false
	}
	started, err := processStart(w.PID)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return started != w.Started
}

// markAbandoned marks as abandoned the running runs and profiles whose
// writer was a process of this host that has ended (killed, crashed, or
// the machine rebooted) without finishing them. Rows of other hosts and
// rows without a writer (from schema versions 1 and 2) are left alone.
func (s *Store) markAbandoned(ctx context.Context) error {
	if s.writer.Host == "" {
		return nil
	}
	for _, table := range []string{"runs", "profiles"} {
		rows, err := s.db.QueryContext(ctx, `SELECT id, writer_pid, writer_started FROM `+table+`
			WHERE status = ? AND writer_host = ? AND writer_pid IS NOT NULL`, string(StatusRunning), s.writer.Host)
		if err != nil {
			return fmt.Errorf("look for abandoned %s: %w", table, err)
		}
		type stale struct {
			id  int64
			pid int
		}
		var found []stale
		for rows.Next() {
			var (
				id      int64
				pid     int
				started sql.NullString
			)
			if err := rows.Scan(&id, &pid, &started); err != nil {
				rows.Close()
				return fmt.Errorf("look for abandoned %s: %w", table, err)
			}
			if s.gone(Writer{PID: pid, Host: s.writer.Host, Started: started.String}) {
				found = append(found, stale{id, pid})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("look for abandoned %s: %w", table, err)
		}
		for _, st := range found {
			q := `UPDATE ` + table + ` SET status = ?, ended_at = ? WHERE id = ? AND status = ?`
			args := []any{string(StatusAbandoned), formatTime(s.now()), st.id, string(StatusRunning)}
			if table == "runs" {
				q = `UPDATE runs SET status = ?, ended_at = ?, error = ? WHERE id = ? AND status = ?`
				args = []any{string(StatusAbandoned), formatTime(s.now()), abandonedError(st.pid), st.id, string(StatusRunning)}
			}
			if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("mark %s %d abandoned: %w", table, st.id, err)
			}
		}
	}
	return nil
}

// abandonedError is the error stored with an abandoned run.
func abandonedError(pid int) string {
	return fmt.Sprintf("the oltplab process that wrote it (pid %d) ended without finishing it", pid)
}

// seenAbandonedRun is seenAbandoned for a run, with the error a writer
// would store.
func (s *Store) seenAbandonedRun(r *Run) {
	if st := s.seenAbandoned(r.Status, r.Writer); st != r.Status {
		r.Status, r.Error = st, abandonedError(r.Writer.PID)
	}
}

// seenAbandoned is how a store opened to read shows a running row whose
// writer is gone: abandoned, as a writer would mark it.
func (s *Store) seenAbandoned(status Status, w Writer) Status {
	if s.toRead && status == StatusRunning && w.PID != 0 && w.Host == s.writer.Host && s.gone(w) {
		return StatusAbandoned
	}
	return status
}
