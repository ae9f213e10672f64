package summary

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// Backup is what a backup scenario (kind backup) stores as its summary.
type Backup struct {
	Source     string     `json:"source"`
	Info       BackupInfo `json:"info"`
	To         string     `json:"to"`
	RestoreDir string     `json:"restore_dir,omitempty"`
	// Devices are the storage under the source, To and RestoreDir.
	Devices     map[string]sysstat.Device `json:"devices,omitempty"`
	Cycles      []BackupCycle             `json:"cycles"`
	Stats       BackupStats               `json:"stats"`
	Interrupted bool                      `json:"interrupted,omitempty"`
	Monitor     Monitor                   `json:"monitor"`
}

// BackupStats are the spread of the finished cycles' figures.
type BackupStats struct {
	BackupSeconds  profile.Summary `json:"backup_seconds"`
	BackupMBps     profile.Summary `json:"backup_mb_per_s"`
	RestoreSeconds profile.Summary `json:"restore_seconds,omitzero"`
	RestoreMBps    profile.Summary `json:"restore_mb_per_s,omitzero"`
	ChecksPassed   int             `json:"checks_passed"`
	ChecksFailed   int             `json:"checks_failed"`
}

// BackupInfo is how a source was backed up, as stored (the stored form of
// scenario.BackupInfo).
type BackupInfo struct {
	// Method is the backup method (instance.BackupMethod's name).
	Method string `json:"method"`
	// Tools are the server tools' description (nil for an embedded
	// database, copied by oltplab itself through SQLite's backup API).
	Tools *BackupTools `json:"tools,omitempty"`
}

// BackupTools are a server engine's backup tools as stored (the stored
// form of instance.BackupperInfo).
type BackupTools struct {
	Engine string `json:"engine"`
	Method string `json:"method"`
	// Jobs is the parallel jobs of the tools, at least 1 (a base backup
	// has none).
	Jobs  int               `json:"jobs"`
	Tools map[string]string `json:"tools"`
	// Version is the first tool's --version line.
	Version string `json:"version"`
	// OSUser is the account the tools run as.
	OSUser string `json:"os_user"`
	// Placement says where the tools run: the source instance's cgroups,
	// a group of their own with an I/O limit, or none.
	Placement string    `json:"placement"`
	Controls  []Control `json:"controls,omitempty"`
	// WriteCap is the write cap the tools and restores ran under and
	// whether it held for buffered writes, as the instance package
	// writes it (absent when nothing was capped).
	WriteCap json.RawMessage `json:"write_cap,omitempty"`
	// RestoreSpec is the managed instance spec restores start from, as
	// the instance package writes it.
	RestoreSpec json.RawMessage `json:"restore_spec"`
}

// Control is one control of a managed instance and how it is applied
// (the stored form of instance.Control).
type Control struct {
	Name      string `json:"name"`
	Requested string `json:"requested,omitempty"`
	Method    string `json:"method"`
	Where     string `json:"where,omitempty"`
	Note      string `json:"note,omitempty"`
}

// BackupCycle is one cycle: a backup, and its restore and check when
// asked. Times are absolute; scenario.Env.Backup adds each phase's span
// on the samples' time axis and what the host did in it.
type BackupCycle struct {
	Cycle   int           `json:"cycle"`
	Backup  BackupPhase   `json:"backup"`
	Restore *RestorePhase `json:"restore,omitempty"`
	Check   *CheckPhase   `json:"check,omitempty"`
	// Failed names the phase that failed ("backup", "restore", "check"),
	// with Error; empty when the cycle finished.
	Failed string `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Finished reports whether the whole cycle ran.
func (c BackupCycle) Finished() bool { return c.Failed == "" }

// BackupPhase is the backup of one cycle.
type BackupPhase struct {
	Dir     string    `json:"dir"`
	Kept    bool      `json:"kept,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Seconds float64   `json:"seconds"`
	// Bytes is the size of the backup; MBps is Bytes per second of the
	// backup, in 10^6 bytes.
	Bytes    int64   `json:"bytes"`
	MBps     float64 `json:"mb_per_s"`
	SyncedBy string  `json:"synced_by,omitempty"`
	// CapNote says when a write cap could not hold for the backup (a
	// cgroup v1 throttle and a tool writing through the page cache),
	// with the rate reached; empty when it held or there was none.
	CapNote string `json:"cap_note,omitempty"`
	// Window and Host are set by scenario.Env.Backup.
	Window *Span                `json:"window,omitempty"`
	Host   *sampler.StepSummary `json:"host,omitempty"`
}

// RestorePhase is the restore of one cycle: the engine's steps until
// the restored database accepts connections.
type RestorePhase struct {
	Dir     string    `json:"dir"`
	Kept    bool      `json:"kept,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Seconds float64   `json:"seconds"`
	// Bytes is the size of the restored database directory (or file);
	// MBps is Bytes per second of the restore, in 10^6 bytes.
	Bytes int64         `json:"bytes"`
	MBps  float64       `json:"mb_per_s"`
	Steps []RestoreStep `json:"steps"`
	// DirectCopy: the copy was oltplab's own, with direct I/O inside the
	// write cap's group, so that a cgroup v1 cap held for it. CapNote, as
	// the backup's, with the copy step's rate.
	DirectCopy bool                 `json:"direct_copy,omitempty"`
	CapNote    string               `json:"cap_note,omitempty"`
	Window     *Span                `json:"window,omitempty"`
	Host       *sampler.StepSummary `json:"host,omitempty"`
}

// RestoreStep is one step of a restore (prepare, copy, sync, init,
// pg_restore, checkpoint, start).
type RestoreStep struct {
	Name    string    `json:"name"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Seconds float64   `json:"seconds"`
	Window  *Span     `json:"window,omitempty"`
}

// CheckPhase is the consistency check of the restored database, stored
// as a run of kind check of its own.
type CheckPhase struct {
	RunID   int64     `json:"run_id"`
	Passed  bool      `json:"passed"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Seconds float64   `json:"seconds"`
	Window  *Span     `json:"window,omitempty"`
}

// Headline is the backups' mean time and rate, the restores' when they
// ran, and the restored copies that failed their check.
func (s Backup) Headline() string {
	st := s.Stats
	if st.BackupSeconds.N == 0 {
		return "no backup finished"
	}
	h := fmt.Sprintf("%d backup(s): %.1f s, %.1f MB/s", st.BackupSeconds.N, st.BackupSeconds.Mean, st.BackupMBps.Mean)
	if st.RestoreSeconds.N > 0 {
		h += fmt.Sprintf("; restore %.1f s, %.1f MB/s", st.RestoreSeconds.Mean, st.RestoreMBps.Mean)
	}
	if st.ChecksFailed > 0 {
		h += fmt.Sprintf("; %d RESTORED COPY(IES) FAILED THE CHECK", st.ChecksFailed)
	}
	return h
}

// Sampling is what the host sampler saw over the cycles.
func (s Backup) Sampling() *Monitor { return &s.Monitor }
