package scenario

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/oltplab/oltplab/internal/agent"
	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/profile"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// BackupSource is the database a backup scenario copies.
type BackupSource struct {
	// DB is the open source database; an embedded one (SQLite) is copied
	// through it (dialect.OnlineBackuper).
	DB     dialect.Database
	Target dialect.Target
	// Instance is the managed instance serving Target, nil otherwise: its
	// backups then run inside its own cgroups (its I/O caps hold for
	// them) and restores start instances like it.
	Instance *instance.Instance
	// BinDir is where the engine's programs are; found when empty.
	BinDir string
	// Remote, when set, is the managed instance serving Target on another
	// host: its agent takes the backups there and restores them there.
	Remote *RemoteInstance
}

// BackupOptions are those of `oltplab backup` and of a plan's backup
// step.
type BackupOptions struct {
	Label string `json:"label,omitempty"`
	// Cycles is the number of backup (and restore) cycles.
	Cycles int `json:"cycles"`
	// To is the directory backups go to (another directory, another
	// device): each cycle writes a new directory in it.
	To string `json:"to"`
	// Method is the engine's backup method; empty takes its default
	// (PostgreSQL basebackup, MariaDB mariadb-backup, SQLite online).
	Method instance.BackupMethod `json:"method,omitempty"`
	// Jobs is the parallelism of a dump and its restore, and of
	// mariadb-backup's copies.
	Jobs int `json:"jobs,omitempty"`
	// Interval is the pause between cycles.
	Interval time.Duration `json:"-"`
	// Restore restores each backup, checks the restored database and
	// removes it: into a new managed instance for a server, a new file for
	// SQLite, in RestoreDir (default To).
	Restore    bool   `json:"restore"`
	RestoreDir string `json:"restore_dir,omitempty"`
	// Keep keeps each cycle's backup and restored copy (the restored
	// instance is stopped all the same).
	Keep bool `json:"keep,omitempty"`
	// IOLimit caps the backup and restore tools' own I/O on the disks
	// under To and RestoreDir, and the restored instances' (a slower
	// backup device emulated). Not for a managed source, whose own caps
	// hold for its backups.
	IOLimit instance.IOLimit `json:"io_limit,omitzero"`
	// RestoreSpec is what restored instances start with (memory, cpus,
	// settings); nil takes the managed source's spec, else the engine's
	// defaults.
	RestoreSpec *instance.Spec `json:"-"`
	// SampleInterval is the host sampling period; default 1 s.
	SampleInterval time.Duration `json:"-"`
}

// DefaultBackupOptions are the studies' three cycles, each restored and
// checked.
func DefaultBackupOptions() BackupOptions {
	return BackupOptions{Cycles: 3, Restore: true}
}

// Validate checks the options on their own.
func (o BackupOptions) Validate() error {
	switch {
	case o.Cycles < 1:
		return fmt.Errorf("cycles must be at least 1, got %d", o.Cycles)
	case o.To == "":
		return errors.New("the backup directory (to) is required: where the backups go")
	case o.Jobs < 0:
		return fmt.Errorf("jobs must not be negative, got %d", o.Jobs)
	case o.Interval < 0:
		return fmt.Errorf("interval must not be negative, got %s", o.Interval)
	}
	return nil
}

func (o BackupOptions) restoreDir() string {
	if o.RestoreDir != "" {
		return o.RestoreDir
	}
	return o.To
}

// BackupInfo is how a source is backed up.
type BackupInfo struct {
	Method instance.BackupMethod `json:"method"`
	// Tools is the server tools' description (nil for an embedded
	// database, copied by oltplab itself through SQLite's backup API).
	Tools *instance.BackupperInfo `json:"tools,omitempty"`
}

// storedInfo is i as a backup stores it.
func storedInfo(i BackupInfo) summary.BackupInfo {
	out := summary.BackupInfo{Method: string(i.Method)}
	if t := i.Tools; t != nil {
		out.Tools = &summary.BackupTools{Engine: string(t.Engine), Method: string(t.Method), Jobs: t.Jobs, Tools: t.Tools,
			Version: t.Version, OSUser: t.OSUser, Placement: t.Placement, RestoreSpec: JSON(t.RestoreSpec)}
		for _, c := range t.Controls {
			out.Tools.Controls = append(out.Tools.Controls, summary.Control{Name: c.Name, Requested: c.Requested,
				Method: c.Method, Where: c.Where, Note: c.Note})
		}
		if t.WriteCap != nil {
			out.Tools.WriteCap = JSON(t.WriteCap)
		}
	}
	return out
}

// BackupError is a cycle that failed: its backup, restore or the check
// of the restored database could not be done. The source is untouched
// (every method only reads it), the partial backup is removed and any
// restored instance stopped. RunID is the stored run holding what
// finished (0 when the cycle ran on its own, outside Env.Backup).
type BackupError struct {
	RunID  int64
	Status store.Status
	Cycle  int
	Phase  string
	Err    error
}

func (e *BackupError) Error() string {
	s := fmt.Sprintf("cycle %d: %s: %v", e.Cycle, e.Phase, e.Err)
	if e.RunID != 0 {
		s += fmt.Sprintf(" (what finished is stored as result %d, marked %s)", e.RunID, e.Status)
	}
	return s
}
func (e *BackupError) Unwrap() error { return e.Err }

// copier is one way of copying a database and bringing the copy up.
type copier interface {
	info() BackupInfo
	// prepare makes the directories backups and restores go to.
	prepare(dirs ...string) error
	// backup writes a new backup into dir, a new directory it creates
	// and marks with m (removed again on failure).
	backup(ctx context.Context, dir string, m claim.Mark) (bytes int64, syncedBy string, err error)
	// restore brings the backup in dir up in into, a new (or empty)
	// directory it marks with m.
	restore(ctx context.Context, dir, into string, m claim.Mark) (*restoredCopy, error)
	close() error
	// onServer: the backups and restores are the server's files, under
	// paths of its own file system (statementCopier), not this host's.
	onServer() bool
}

// restoredCopy is a restored database, running until stop.
type restoredCopy struct {
	target dialect.Target
	steps  []instance.RestoreStep
	bytes  int64
	direct bool // copied with direct I/O inside the write cap's group
	stop   func(context.Context) error
}

// Backups takes the backups of one source, one cycle at a time: a
// backup is callable on its own (Cycle), cancellable, and returns a
// typed result with its start and end, for scenarios that run backups
// beside other work (noisy neighbours). Close releases it.
type Backups struct {
	env  *Env
	src  BackupSource
	opts BackupOptions
	c    copier
	stem string // each cycle's directory is stem-cN in To (and RestoreDir)
}

// NewBackups checks that src can be backed up as o asks (the method's
// tools installed, caps possible) and prepares the cycles: To (and
// RestoreDir) are created when missing, and refused (a *instance.Error of
// KindDirectory) when they are system directories or their paths go
// through a link or directory another user could change
// (internal/claim).
func (e *Env) NewBackups(ctx context.Context, src BackupSource, o BackupOptions) (b *Backups, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []*string{&o.To, &o.RestoreDir} {
		if *d != "" {
			if *d, err = filepath.Abs(*d); err != nil {
				return nil, &instance.Error{Kind: instance.KindDirectory, Err: err}
			}
		}
	}
	b = &Backups{env: e, src: src, opts: o, stem: "oltplab-backup-" + time.Now().Format("20060102T150405") + "-" + randomHex(3)}
	defer func() {
		if err == nil {
			dirs := []string{o.To}
			if o.Restore {
				dirs = append(dirs, o.restoreDir())
			}
			err = b.c.prepare(dirs...)
		}
		if err != nil && b != nil && b.c != nil {
			_ = b.c.close()
		}
	}()
	if r := src.Remote; r != nil {
		switch {
		case o.RestoreSpec != nil:
			return nil, &UnsupportedError{What: "restore with a spec of its own on an agent's host (restores there start like their source)", Dialect: src.DB.Name()}
		case !o.IOLimit.IsZero():
			return nil, &UnsupportedError{What: "cap the I/O of the backups of a managed instance (its own caps hold for them)", Dialect: src.DB.Name()}
		}
		req := agent.BackupRequest{To: o.To, Method: o.Method, Jobs: o.Jobs}
		if o.Restore {
			req.RestoreDir = o.restoreDir()
		}
		info, err := r.Client.BackupsPrepare(ctx, r.ID, req)
		if err != nil {
			return nil, fmt.Errorf("backups on host %s: %w", r.Host, err)
		}
		b.c = &remoteCopier{r: r, opts: o, desc: info, source: src.Target, log: e.logger()}
		return b, nil
	}
	if ob, ok := src.DB.(dialect.OnlineBackuper); ok {
		if o.Method != "" && o.Method != instance.Online {
			return nil, &UnsupportedError{What: "back up with " + string(o.Method) + " (its backups use SQLite's online backup API: method online)", Dialect: src.DB.Name()}
		}
		if !o.IOLimit.IsZero() {
			return nil, &UnsupportedError{What: "cap the I/O of its backups (oltplab copies an embedded database itself, in its own process)", Dialect: src.DB.Name()}
		}
		b.c = &onlineCopier{src: ob, target: src.Target}
		return b, nil
	}
	if sb, ok := src.DB.(dialect.ServerBackuper); ok {
		sc, scratch := src.DB.(dialect.Scratcher)
		switch {
		case !scratch:
			return nil, &UnsupportedError{What: "drop the databases it restores", Dialect: src.DB.Name()}
		case o.Method != "" && o.Method != BackupDatabase:
			return nil, &UnsupportedError{What: "back up with " + string(o.Method) + " (its server backs up with BACKUP DATABASE)", Dialect: src.DB.Name()}
		case !o.IOLimit.IsZero():
			return nil, &UnsupportedError{What: "cap the I/O of its backups (its server writes them itself)", Dialect: src.DB.Name()}
		}
		b.c = &statementCopier{sb: sb, sc: sc, restoreDir: o.restoreDir(), keep: o.Keep,
			log: func(msg string, err error) { e.logger().Warn(msg, "err", err) }}
		return b, nil
	}
	eng, ok := instance.EngineOf(src.Target.Scheme)
	if !ok {
		return nil, &UnsupportedError{What: "be backed up", Dialect: src.Target.Scheme}
	}
	dataDir := ""
	if src.DB != nil && src.Instance == nil {
		dataDir = e.LocalDataDir(ctx, src.DB, src.Target)
	}
	bk, err := instance.NewBackupper(ctx, instance.BackupSource{Engine: eng, Target: src.Target, Instance: src.Instance,
		DataDir: dataDir, BinDir: src.BinDir}, instance.BackupOptions{Method: o.Method, Jobs: o.Jobs, IOLimit: o.IOLimit,
		Dirs: []string{o.To, o.restoreDir()}, Restore: o.RestoreSpec}, e.logger())
	if err != nil {
		return nil, err
	}
	b.c = &serverCopier{b: bk, source: src.Target}
	return b, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Info is how the source is backed up.
func (b *Backups) Info() BackupInfo { return b.c.info() }

// Close releases what NewBackups prepared.
func (b *Backups) Close() error { return b.c.close() }

func mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / d.Seconds()
}

// Cycle runs cycle n: a backup into a new directory in To, then, when
// Restore is set, its restore into a new directory in RestoreDir, the
// consistency check of the restored database (stored as a check run),
// and the restored instance's stop. Unless Keep is set, the backup and
// the restored copy are removed afterwards. A failure is a *BackupError
// naming the phase; cancellation returns ctx's error. Either way the
// returned cycle holds what finished, no tool or restored instance is
// left running and the partial backup is gone.
func (b *Backups) Cycle(ctx context.Context, n int) (c summary.BackupCycle, err error) {
	o := b.opts
	c = summary.BackupCycle{Cycle: n}
	fail := func(phase string, e error) (summary.BackupCycle, error) {
		c.Failed, c.Error = phase, b.env.scrub(e.Error())
		if ctx.Err() != nil {
			c.Error = "interrupted"
			return c, ctx.Err()
		}
		return c, &BackupError{Cycle: n, Phase: phase, Err: e}
	}
	dir := filepath.Join(o.To, fmt.Sprintf("%s-c%d", b.stem, n))
	c.Backup = summary.BackupPhase{Dir: dir, Started: time.Now()}
	b.env.note("cycle %d: backup (%s) into %s", n, b.c.info().Method, dir)
	// Recorded before it exists: what a killed oltplab leaves is removed
	// later (RemoveLeftovers).
	// A server that backs itself up writes under its own paths: nothing
	// of this host's to record or remove.
	local := !b.c.onServer()
	m := claim.NewMark(claim.KindBackup)
	if local {
		if err := b.env.leftovers().Track(ctx, dir, m); err != nil {
			return fail("backup", err)
		}
		defer b.release(ctx, dir, m)
	}
	if rc, ok := b.c.(*remoteCopier); ok {
		defer rc.discard(ctx, dir)
	}
	bytes, syncedBy, err := b.c.backup(ctx, dir, m)
	c.Backup.Ended = time.Now()
	c.Backup.Seconds = c.Backup.Ended.Sub(c.Backup.Started).Seconds()
	if err != nil {
		return fail("backup", err)
	}
	c.Backup.Bytes, c.Backup.SyncedBy = bytes, syncedBy
	c.Backup.MBps = mbps(bytes, c.Backup.Ended.Sub(c.Backup.Started))
	b.env.note("cycle %d: backup of %s in %.1f s (%.1f MB/s)", n, decimalBytes(bytes), c.Backup.Seconds, c.Backup.MBps)
	if c.Backup.CapNote = b.writeCap().Note(bytes, c.Backup.Seconds, false); c.Backup.CapNote != "" {
		b.env.note("cycle %d: backup %s", n, c.Backup.CapNote)
	}
	c.Backup.Kept = o.Keep
	if !o.Restore {
		return c, nil
	}

	into := filepath.Join(o.restoreDir(), fmt.Sprintf("%s-c%d-restored", b.stem, n))
	c.Restore = &summary.RestorePhase{Dir: into, Started: time.Now(), Kept: o.Keep}
	b.env.note("cycle %d: restore into %s", n, into)
	mr := claim.NewMark(claim.KindRestore)
	if local {
		if err := b.env.leftovers().Track(ctx, into, mr); err != nil {
			return fail("restore", err)
		}
		defer b.release(ctx, into, mr)
	}
	r, err := b.c.restore(ctx, dir, into, mr)
	c.Restore.Ended = time.Now()
	c.Restore.Seconds = c.Restore.Ended.Sub(c.Restore.Started).Seconds()
	if r != nil {
		defer func() {
			if serr := r.stop(context.WithoutCancel(ctx)); serr != nil {
				b.env.logger().Warn("stop the restored instance", "err", serr)
			}
		}()
		for _, s := range r.steps {
			c.Restore.Steps = append(c.Restore.Steps, summary.RestoreStep{Name: s.Name, Started: s.Started, Ended: s.Ended,
				Seconds: s.Ended.Sub(s.Started).Seconds()})
		}
	}
	if err != nil {
		return fail("restore", err)
	}
	c.Restore.Bytes = r.bytes
	c.Restore.MBps = mbps(r.bytes, c.Restore.Ended.Sub(c.Restore.Started))
	b.env.note("cycle %d: restored %s in %.1f s (%.1f MB/s); checking it", n, decimalBytes(r.bytes), c.Restore.Seconds, c.Restore.MBps)
	c.Restore.DirectCopy = r.direct
	copySeconds := c.Restore.Seconds
	for _, s := range c.Restore.Steps {
		if s.Name == "copy" {
			copySeconds = s.Seconds
		}
	}
	if c.Restore.CapNote = b.writeCap().Note(r.bytes, copySeconds, r.direct); c.Restore.CapNote != "" {
		b.env.note("cycle %d: restore %s", n, c.Restore.CapNote)
	}

	c.Check = &summary.CheckPhase{Started: time.Now()}
	out, err := b.checkRestored(ctx, r.target)
	c.Check.Ended = time.Now()
	c.Check.Seconds = c.Check.Ended.Sub(c.Check.Started).Seconds()
	c.Check.RunID, c.Check.Passed = out.RunID, out.Passed
	if err != nil {
		return fail("check", err)
	}
	return c, nil
}

// checkRestored runs the consistency checks on the restored database.
func (b *Backups) checkRestored(ctx context.Context, tg dialect.Target) (CheckOutcome, error) {
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		return CheckOutcome{}, fmt.Errorf("open the restored database: %w", err)
	}
	defer db.Close()
	return b.env.Check(ctx, db, tg)
}

// writeCap is the write cap backups and restores run under, nil for
// none.
func (b *Backups) writeCap() *instance.WriteCap {
	if t := b.c.info().Tools; t != nil {
		return t.WriteCap
	}
	return nil
}

// release removes a cycle's directory (a backup, a restored copy) where
// it carries its mark, or, with Keep, records that it stays.
func (b *Backups) release(ctx context.Context, dir string, m claim.Mark) {
	if _, err := os.Lstat(dir); err == nil && b.opts.Keep {
		b.env.leftovers().kept(ctx, dir, m)
		return
	}
	b.env.removeMarked(ctx, dir, m)
}

// serverCopier backs servers up with their engine's tools
// (internal/instance) and restores them into new managed instances.
type serverCopier struct {
	b       *instance.Backupper
	source  dialect.Target
	last    instance.Backup
	lastDir string // as backup was given it
}

func (s *serverCopier) info() BackupInfo {
	i := s.b.Info()
	return BackupInfo{Method: i.Method, Tools: &i}
}

func (s *serverCopier) prepare(dirs ...string) error { return s.b.PrepareDirs(dirs...) }

func (s *serverCopier) backup(ctx context.Context, dir string, m claim.Mark) (int64, string, error) {
	bk, err := s.b.Backup(ctx, dir, m)
	if err != nil {
		return 0, "", err
	}
	s.last, s.lastDir = bk, dir
	return bk.Bytes, bk.SyncedBy, nil
}

func (s *serverCopier) restore(ctx context.Context, dir, into string, m claim.Mark) (*restoredCopy, error) {
	if s.lastDir != dir {
		return nil, fmt.Errorf("restore %s: not the last backup taken (%s)", dir, s.lastDir)
	}
	inst, rep, err := s.b.Restore(ctx, s.last, into, m)
	if err != nil {
		return &restoredCopy{steps: rep.Steps, stop: func(context.Context) error { return nil }}, err
	}
	tg := inst.Target()
	// The restored copy holds the source's database under its own name.
	if s.source.URL != nil && s.source.URL.Path != "" && s.source.URL.Path != "/" {
		tg.URL.Path = s.source.URL.Path
	}
	return &restoredCopy{target: tg, steps: rep.Steps, bytes: rep.Bytes, direct: rep.DirectCopy, stop: inst.Stop}, nil
}

func (s *serverCopier) close() error { return s.b.Close() }

func (s *serverCopier) onServer() bool { return false }

// onlineCopier copies an embedded database with its dialect's online
// backup (SQLite's backup API), and restores a copy the same way, from
// the backup file into a new one.
type onlineCopier struct {
	src    dialect.OnlineBackuper
	target dialect.Target
}

func (o *onlineCopier) info() BackupInfo { return BackupInfo{Method: instance.Online} }

// prepare makes the directories as a server's backups do (claim.Within);
// oltplab writes there itself, as its own user.
func (o *onlineCopier) prepare(dirs ...string) error {
	for _, dir := range dirs {
		d, err := claim.Within(dir, nil, true)
		if err != nil {
			return &instance.Error{Kind: instance.KindDirectory, Err: fmt.Errorf("directory %s: %w", dir, err)}
		}
		d.Close()
	}
	return nil
}

// file is the database file's name in a backup or restore directory, as
// in a managed embedded instance's data directory.
func (o *onlineCopier) file(dir string) string { return filepath.Join(dir, instance.SQLiteFile) }

// backup copies the database into dir/oltplab.db, dir a directory of its
// own that oltplab creates and marks (claim).
func (o *onlineCopier) backup(ctx context.Context, dir string, m claim.Mark) (int64, string, error) {
	parent, err := claim.Within(filepath.Dir(dir), nil, true)
	if err != nil {
		return 0, "", &instance.Error{Kind: instance.KindDirectory, Err: fmt.Errorf("backup directory %s: %w", filepath.Dir(dir), err)}
	}
	defer parent.Close()
	d, err := parent.MkdirMarked(filepath.Base(dir), m)
	if err != nil {
		return 0, "", &instance.Error{Kind: instance.KindDirectory, Err: fmt.Errorf("backup directory %s: %w", dir, err)}
	}
	defer d.Close()
	n, err := o.src.OnlineBackup(ctx, o.file(d.Path()))
	if err != nil {
		_ = parent.Remove(filepath.Base(dir), m)
		return 0, "", err
	}
	return n, "SQLite (the backup's commit)", nil
}

// restore copies the backup in dir into into/oltplab.db, into a new (or
// empty) directory oltplab marks (claim.Take).
func (o *onlineCopier) restore(ctx context.Context, dir, into string, m claim.Mark) (*restoredCopy, error) {
	started := time.Now()
	d, err := claim.Take(into, m, claim.TakeOptions{})
	if err != nil {
		return nil, &instance.Error{Kind: instance.KindDirectory, Err: fmt.Errorf("restore directory %s: %w", into, err)}
	}
	defer d.Close()
	into = d.Path()
	from, err := dialect.Open(ctx, fileTarget(o.target, o.file(dir)))
	if err != nil {
		return nil, fmt.Errorf("open the backup: %w", err)
	}
	defer from.Close()
	ob, ok := from.(dialect.OnlineBackuper)
	if !ok {
		return nil, fmt.Errorf("the %s dialect cannot copy the backup back", from.Name())
	}
	n, err := ob.OnlineBackup(ctx, o.file(into))
	steps := []instance.RestoreStep{{Name: "copy", Started: started, Ended: time.Now()}}
	if err != nil {
		return &restoredCopy{steps: steps, stop: func(context.Context) error { return nil }}, err
	}
	return &restoredCopy{target: fileTarget(o.target, o.file(into)), steps: steps, bytes: n,
		stop: func(context.Context) error { return nil }}, nil
}

func (o *onlineCopier) close() error { return nil }

func (o *onlineCopier) onServer() bool { return false }

// fileTarget is tg (an embedded database's target, with its parameters)
// naming another file.
func fileTarget(tg dialect.Target, file string) dialect.Target {
	u := *tg.URL
	u.Opaque, u.Path, u.OmitHost = "", file, true
	tg.URL = &u
	return tg
}

// decimalBytes is a size for backup progress notes, in the decimal units
// of the MB/s beside it.
func decimalBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d kB", n/1000)
}

// BackupOutcome is a stored backup scenario.
type BackupOutcome struct {
	RunID  int64        `json:"run_id"`
	Status store.Status `json:"status"`
	summary.Backup
}

// Backup runs the backup scenario: o.Cycles cycles of Backups.Cycle
// with o.Interval between them, the host sampled throughout (the devices
// under the source, the backups and the restores marked), stored as one
// run of kind backup with each phase's window on the samples' time axis
// and what the devices did in it. A failed cycle ends the scenario:
// what finished is stored (partial) and the error is a *BackupError;
// cancellation stores what finished likewise and returns ctx's error.
// RunID is 0 when nothing could be stored.
func (e *Env) Backup(ctx context.Context, src BackupSource, o BackupOptions) (BackupOutcome, error) {
	if err := o.Validate(); err != nil {
		return BackupOutcome{}, err
	}
	meta, err := ReadSchema(ctx, src.DB, src.Target)
	if err != nil {
		return BackupOutcome{}, err
	}
	bs, err := e.NewBackups(ctx, src, o)
	if err != nil {
		return BackupOutcome{}, err
	}
	defer func() {
		if err := bs.Close(); err != nil {
			e.logger().Warn("backup: clean up", "err", err)
		}
	}()
	rc := e.GatherContext(ctx, src.DB, src.Target, &meta)
	sum := summary.Backup{Source: src.Target.String(), Info: storedInfo(bs.Info()), To: o.To, Devices: map[string]sysstat.Device{}}
	dirs := map[string]string{"backup": o.To}
	if o.Restore {
		sum.RestoreDir = o.restoreDir()
		dirs["restore"] = o.restoreDir()
	}
	source := rc.DataDir()
	if src.Instance != nil {
		source = src.Instance.DataDir()
	}
	if source != "" {
		dirs["source"] = source
	}
	var agentDirs map[string]string
	switch {
	case src.Remote != nil:
		// The agent's host's paths: its agent samples that host and
		// marks their devices.
		agentDirs, dirs = dirs, map[string]string{}
		e.note("the backups are taken on host %s by its agent, into %s there", src.Remote.Host, o.To)
	case bs.c.onServer():
		// The server's paths: nothing of this host's is under them.
		dirs = map[string]string{}
		e.note("the backups and restores are the server's files, in %s and %s on its file system", o.To, o.restoreDir())
	}
	// To and RestoreDir exist (NewBackups made them), so that the
	// sampler finds their devices.
	for role, d := range dirs {
		if dev, err := deviceOfNearest(d); err == nil {
			sum.Devices[role] = dev
		}
	}
	params := struct {
		BackupOptions
		IntervalSeconds float64    `json:"interval_seconds"`
		Info            BackupInfo `json:"info"`
	}{o, o.Interval.Seconds(), bs.Info()}
	expID, expSeq := e.link()
	id, err := e.Store.CreateRun(ctx, store.Run{Kind: store.KindBackup, Label: o.Label, Target: src.Target.String(),
		Dialect: src.DB.Name(), ToolVersion: e.ToolVersion, ExperimentID: expID, ExperimentSeq: expSeq,
		Params: JSON(params), Context: JSON(rc)})
	if err != nil {
		return BackupOutcome{}, storeErr("record the backup", err)
	}
	e.note("%d backup cycle(s) of %s with %s into %s (Ctrl-C stops, keeps what finished and removes the partial backup)",
		o.Cycles, src.Target, sum.Info.Method, o.To)

	interval := o.SampleInterval
	if interval <= 0 {
		interval = time.Second
	}
	t0 := time.Now()
	// A managed source's own I/O counters include its backup tools': they
	// run in its cgroups.
	so := sampler.Options{Start: t0, Interval: interval, Dirs: dirs, DB: src.DB, OwnIO: e.OwnIO, Logger: e.logger()}
	if agentDirs != nil && e.Agent.Addr != "" {
		so.Agent, so.AgentDirs = e.Agent, agentDirs
	}
	s := sampler.Start(ctx, so)
	var runErr error
	for n := 1; n <= o.Cycles; n++ {
		if n > 1 && o.Interval > 0 {
			e.note("pausing %s before cycle %d", o.Interval, n)
			if err := sleep(ctx, o.Interval); err != nil {
				runErr = err
				break
			}
		}
		c, err := bs.Cycle(ctx, n)
		sum.Cycles = append(sum.Cycles, c)
		if err != nil {
			runErr = err
			break
		}
	}
	m, samples := StopSampling(s, time.Since(t0), rc.Placement)
	sum.Monitor = m
	cycleSamples := samples
	if src.Remote != nil {
		cycleSamples = dbHostSamples(samples) // the backups ran there
	}
	for i := range sum.Cycles {
		placeCycle(&sum.Cycles[i], t0, cycleSamples)
	}
	sum.Stats = backupStats(sum.Cycles)
	sum.Interrupted = errors.Is(runErr, context.Canceled) && ctx.Err() != nil

	finished := 0
	for _, c := range sum.Cycles {
		if c.Finished() {
			finished++
		}
	}
	status := summary.Status(summary.Facts{Measured: finished > 0, Failed: runErr != nil})
	errText := ""
	switch {
	case sum.Interrupted:
		errText = "interrupted"
	case runErr != nil:
		errText = e.scrub(runErr.Error())
	}
	out := BackupOutcome{RunID: id, Status: status, Backup: sum}
	if err := e.complete(ctx, id, store.Outcome{Status: status, Summary: JSON(sum), Error: errText, Samples: samples}); err != nil {
		return out, err
	}
	var be *BackupError
	if errors.As(runErr, &be) {
		be.RunID, be.Status = id, status
	}
	return out, runErr
}

// placeCycle turns a cycle's absolute times into windows on the samples'
// time axis (ms since t0) and summarises what the host did in each.
func placeCycle(c *summary.BackupCycle, t0 time.Time, samples []store.Sample) {
	win := func(from, to time.Time) *summary.Span {
		w := summary.SpanOf(t0, from, to)
		return &w
	}
	host := func(w *summary.Span) *sampler.StepSummary {
		h := sampler.Summarize(samples, w.From(), w.To())
		return &h
	}
	c.Backup.Window = win(c.Backup.Started, c.Backup.Ended)
	c.Backup.Host = host(c.Backup.Window)
	if r := c.Restore; r != nil {
		r.Window = win(r.Started, r.Ended)
		r.Host = host(r.Window)
		for i, s := range r.Steps {
			r.Steps[i].Window = win(s.Started, s.Ended)
		}
	}
	if ch := c.Check; ch != nil {
		ch.Window = win(ch.Started, ch.Ended)
	}
}

func backupStats(cycles []summary.BackupCycle) summary.BackupStats {
	var st summary.BackupStats
	var bs, bm, rs, rm []float64
	for _, c := range cycles {
		if c.Failed == "backup" {
			continue
		}
		bs, bm = append(bs, c.Backup.Seconds), append(bm, c.Backup.MBps)
		if c.Restore != nil && c.Failed != "restore" {
			rs, rm = append(rs, c.Restore.Seconds), append(rm, c.Restore.MBps)
		}
		if c.Check != nil && c.Failed == "" {
			if c.Check.Passed {
				st.ChecksPassed++
			} else {
				st.ChecksFailed++
			}
		}
	}
	st.BackupSeconds, st.BackupMBps = profile.Summarize(bs), profile.Summarize(bm)
	if len(rs) > 0 {
		st.RestoreSeconds, st.RestoreMBps = profile.Summarize(rs), profile.Summarize(rm)
	}
	return st
}

// deviceOfNearest is the device under dir, or under its nearest existing
// parent when dir does not exist yet.
func deviceOfNearest(dir string) (sysstat.Device, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return sysstat.Device{}, err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == "/" {
			return sysstat.DeviceOf(d)
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RemoteInstance is a managed instance an agent runs on another host (a
// plan's target with host:): its backups are taken there, beside its
// data, by the agent (agent.Client.Backup), into a directory of that
// host, and restored there (agent.Client.Restore).
type RemoteInstance struct {
	Client agent.Client
	ID     string // the instance's id on the agent
	Host   string // the plan's name of the host
	// Secret, when set, is told the password and ticket of every
	// restored instance, for scrubbing.
	Secret func(string)
}

// remoteCopier takes backups through the agent of the source's host and
// restores them there, each into a new instance of that agent, checked
// from here through its tunnel; a backup not kept is removed by the
// agent at the end of its cycle (discard), or when the instance stops;
// a restored copy not kept when its instance stops.
type remoteCopier struct {
	r      *RemoteInstance
	opts   BackupOptions
	desc   instance.BackupperInfo
	source dialect.Target // as reached here (its database's name)
	log    *slog.Logger
}

func (c *remoteCopier) info() BackupInfo {
	i := c.desc
	i.Placement += " on host " + c.r.Host + " (its agent ran them)"
	return BackupInfo{Method: i.Method, Tools: &i}
}

func (c *remoteCopier) prepare(dirs ...string) error { return nil } // the agent made To and the restores' (NewBackups)

func (c *remoteCopier) backup(ctx context.Context, dir string, m claim.Mark) (int64, string, error) {
	bk, err := c.r.Client.Backup(ctx, c.r.ID, agent.BackupRequest{To: filepath.Dir(dir), Name: filepath.Base(dir),
		Method: c.opts.Method, Jobs: c.opts.Jobs, Keep: c.opts.Keep})
	if err != nil {
		return 0, "", err
	}
	return bk.Bytes, bk.SyncedBy, nil
}

// restore has the agent restore the cycle's backup into into on its
// host and start an instance on it; the copy is reached here through a
// forwarder to that instance, whose lease is renewed until stop.
func (c *remoteCopier) restore(ctx context.Context, dir, into string, m claim.Mark) (*restoredCopy, error) {
	rs, err := c.r.Client.Restore(ctx, c.r.ID, filepath.Base(dir), agent.RestoreRequest{Into: into, Keep: c.opts.Keep})
	if err != nil {
		return nil, err
	}
	info := rs.Instance
	if c.r.Secret != nil {
		c.r.Secret(info.Password)
		c.r.Secret(info.Ticket)
	}
	life, endLease := context.WithCancel(context.WithoutCancel(ctx))
	go c.r.Client.KeepLease(life, info.ID, info.Lease, func(err error) {
		if err != nil {
			c.log.Warn("renew the restored instance's lease", "host", c.r.Host, "err", err)
		}
	})
	stopRemote := func(ctx context.Context) error {
		endLease()
		if err := c.r.Client.Stop(ctx, info.ID); err != nil {
			return fmt.Errorf("stop the restored instance on host %s: %w (its agent stops it itself once its lease lapses, %s)", c.r.Host, err, info.Lease)
		}
		return nil
	}
	steps := rs.Report.Steps
	f, err := c.r.Client.Forward(info.ID)
	if err != nil {
		return &restoredCopy{steps: steps, stop: stopRemote}, err
	}
	stop := func(ctx context.Context) error {
		f.Close()
		return stopRemote(ctx)
	}
	u, err := url.Parse(info.URL)
	if err != nil {
		return &restoredCopy{steps: steps, stop: stop}, fmt.Errorf("the agent's URL of the restored instance: %w", err)
	}
	u.Host = f.Addr()
	// The restored copy holds the source's database under its own name.
	if s := c.source.URL; s != nil && s.Path != "" && s.Path != "/" {
		u.Path = s.Path
	}
	tg, err := dialect.ParseTarget(u.String(), "")
	if err != nil {
		return &restoredCopy{steps: steps, stop: stop}, fmt.Errorf("the agent's URL of the restored instance: %w", err)
	}
	tg.Password, tg.PasswordSet = dialect.Secret(info.Password), true
	tg.Env = c.source.Env
	return &restoredCopy{target: tg, steps: steps, bytes: rs.Report.Bytes, direct: rs.Report.DirectCopy, stop: stop}, nil
}

// discard has the agent remove the cycle's backup, unless kept.
func (c *remoteCopier) discard(ctx context.Context, dir string) {
	if c.opts.Keep {
		return
	}
	if err := c.r.Client.RemoveBackup(context.WithoutCancel(ctx), c.r.ID, filepath.Base(dir)); err != nil {
		var re *agent.RemoteError
		if errors.As(err, &re) && re.Status == http.StatusNotFound {
			return // never taken (the backup failed and removed itself)
		}
		c.log.Warn("remove the backup on its host", "host", c.r.Host, "dir", dir, "err", err)
	}
}

func (c *remoteCopier) close() error { return nil }

// onServer: the backups are another host's files.
func (c *remoteCopier) onServer() bool { return true }
