package instance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// BackupMethod is how a server is backed up, with the engine's own tools.
type BackupMethod string

const (
	// BaseBackup is PostgreSQL's pg_basebackup: a physical copy of the
	// whole cluster with the WAL it needs; restored by copying it into a
	// data directory and starting a server on it (crash recovery).
	BaseBackup BackupMethod = "basebackup"
	// Dump is PostgreSQL's pg_dump -Fd -j N of the target database;
	// restored with pg_restore -j N into a new cluster.
	Dump BackupMethod = "dump"
	// MariaBackup is mariadb-backup --backup of the server's data
	// directory; restored with --prepare and --copy-back into a new one.
	MariaBackup BackupMethod = "mariadb-backup"
	// Online is SQLite's online backup API, through the embedded dialect
	// (dialect.OnlineBackuper): no server, no tool of this package.
	Online BackupMethod = "online"
)

// UnmarshalText accepts the method names and the tools' names
// (pg_basebackup, pg_dump, mariabackup); empty means the engine's default.
func (m *BackupMethod) UnmarshalText(b []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "":
		*m = ""
	case "basebackup", "pg_basebackup", "physical":
		*m = BaseBackup
	case "dump", "pg_dump", "logical":
		*m = Dump
	case "mariadb-backup", "mariabackup":
		*m = MariaBackup
	case "online", "sqlite":
		*m = Online
	default:
		return fmt.Errorf("backup method %q: want basebackup or dump (PostgreSQL), mariadb-backup (MariaDB), online (SQLite)", string(b))
	}
	return nil
}

// backupEngine is what an engine that can be backed up with its own
// tools implements (an optional part of engine).
type backupEngine interface {
	// backupMethods are the methods it offers, its default first.
	backupMethods() []BackupMethod
	// backupTools are the programs a method needs, with their package.
	backupTools(m BackupMethod) []clientTool
	// backup writes one backup into dir (existing, empty, the tools'
	// account's) and reports whether its tool made it durable itself.
	backup(ctx context.Context, b *Backupper, dir string) (synced bool, err error)
	// restore brings bk up as a new instance of spec (its DataDir
	// exists and is empty), reporting each step in r.
	restore(ctx context.Context, b *Backupper, bk Backup, spec Spec, r *RestoreReport) (*Instance, error)
}

// sourceChecker is what an engine implements that can tell, before the
// first backup, that the source will refuse it.
type sourceChecker interface {
	checkSource(ctx context.Context, b *Backupper) error
}

// clientTool is a program a backup method runs and the Debian package
// that provides it.
type clientTool struct {
	name string
	pkg  string
	dirs []string // searched before PATH
	// system tools (cp, sync) are not the engine's: BinDir does not
	// apply to them.
	system bool
}

// BackupSource is the server a backup copies.
type BackupSource struct {
	Engine Engine
	// Target is how the tools connect (with its password). A logical
	// backup copies its database.
	Target dialect.Target
	// Instance is the managed instance serving Target, or nil. Its tools
	// then run inside its cgroups and CPUs, as its account: a backup
	// counts against the instance's own I/O caps, as on shared storage.
	Instance *Instance
	// DataDir is the server's data directory on this host, which
	// mariadb-backup reads; taken from Instance when it is set.
	DataDir string
	// BinDir is where the engine's programs are; found when empty (the
	// instance's when Instance is set).
	BinDir string
}

// BackupOptions are how a Backupper works.
type BackupOptions struct {
	Method BackupMethod // empty: the engine's default
	// Jobs is the parallelism of a dump and its restore (pg_dump -j,
	// pg_restore -j) and of mariadb-backup's copies (--parallel); 0 or 1
	// runs one.
	Jobs int
	// IOLimit caps the tools' own I/O on the disks under Dirs (a slower
	// backup device emulated), in a cgroup of the backups' own; restored
	// instances get it too. Not with a managed source, whose own caps
	// hold for its backups.
	IOLimit IOLimit
	// Dirs are where backups and restores go.
	Dirs []string
	// Restore is the instance restores start: its controls, memory and
	// settings (Name, Engine, DataDir and WALDir are set per restore).
	// Nil: the source instance's spec when it is managed, else the
	// engine's defaults with IOLimit.
	Restore *Spec
}

// Backupper takes backups of one server with the engine's own tools and
// restores them into new managed instances. Close releases it.
type Backupper struct {
	src    BackupSource
	eng    engine
	be     backupEngine
	method BackupMethod
	jobs   int
	tools  map[string]string // tool name → path
	run    toolRunner
	cg     *cgroup // the backups' own group (IOLimit), nil otherwise
	spec   Spec    // of restores
	desc   BackupperInfo
	log    *slog.Logger
}

// BackupperInfo is how a Backupper works, recorded with its results.
type BackupperInfo struct {
	Engine Engine       `json:"engine"`
	Method BackupMethod `json:"method"`
	// Jobs is BackupOptions.Jobs, at least 1 (a base backup has none).
	Jobs  int               `json:"jobs"`
	Tools map[string]string `json:"tools"`
	// Version is the first tool's --version line.
	Version string `json:"version"`
	// OSUser is the account the tools run as.
	OSUser string `json:"os_user"`
	// Placement says where the tools run: the source instance's cgroups,
	// a group of their own with IOLimit, or none.
	Placement string    `json:"placement"`
	Controls  []Control `json:"controls,omitempty"`
	// WriteCap is the write cap the tools and restores run under (the
	// source instance's io_limit, or IOLimit), nil without one: whether
	// it holds for writes through the page cache (see WriteCap).
	WriteCap *WriteCap `json:"write_cap,omitempty"`
	// RestoreSpec is the spec restores start instances from.
	RestoreSpec Spec `json:"restore_spec"`
}

// NewBackupper checks that the method's tools are installed (a missing
// one is a KindBinary error naming its Debian package) and prepares where
// they run.
func NewBackupper(ctx context.Context, src BackupSource, o BackupOptions, log *slog.Logger) (_ *Backupper, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if src.Instance != nil {
		src.Engine = src.Instance.spec.Engine
	}
	eng, ok := engines[src.Engine]
	if !ok {
		return nil, errorf(KindSpec, "backup: engine %q: want postgres or mariadb", src.Engine)
	}
	be, ok := eng.(backupEngine)
	if !ok {
		return nil, errorf(KindSpec, "backup: %s has no backup tools of its own", src.Engine)
	}
	method := o.Method
	if method == "" {
		method = be.backupMethods()[0]
	}
	if !contains(methodNames(be), string(method)) {
		return nil, errorf(KindSpec, "backup method %s: %s offers %s", method, src.Engine, strings.Join(methodNames(be), ", "))
	}
	if src.Instance != nil && !o.IOLimit.IsZero() {
		return nil, errorf(KindSpec, "backup: the backups of managed instance %s run inside its own I/O caps; give the caps to the instance",
			src.Instance.spec.InstanceName())
	}
	b := &Backupper{src: src, eng: eng, be: be, method: method, jobs: max(o.Jobs, 1), tools: map[string]string{}, log: log}
	b.desc = BackupperInfo{Engine: src.Engine, Method: method, Jobs: b.jobs, Tools: b.tools}
	binDir := src.BinDir
	if src.Instance != nil {
		binDir = src.Instance.bins.Dir
		if src.DataDir == "" {
			b.src.DataDir = src.Instance.engineDir
		}
	}
	for _, t := range be.backupTools(method) {
		p, where := findTool(t, binDir)
		if p == "" {
			return nil, errorf(KindBinary, "%s not found in %s: install the Debian package %s", t.name, where, t.pkg)
		}
		b.tools[t.name] = p
		if b.desc.Version == "" {
			b.desc.Version = versionOf(ctx, p)
		}
	}
	first := be.backupTools(method)[0].name
	b.run.binDir = filepath.Dir(b.tools[first])
	if c, ok := be.(sourceChecker); ok {
		if err := c.checkSource(ctx, b); err != nil {
			return nil, err
		}
	}

	switch {
	case src.Instance != nil:
		b.run.acct, b.run.pl = src.Instance.acct, src.Instance.placement
		b.desc.Placement = "inside managed instance " + src.Instance.spec.InstanceName() + "'s cgroups and CPUs (its caps hold for its backups)"
		if l := src.Instance.spec.IOLimit; !l.IsZero() {
			b.desc.WriteCap = writeCapOf(src.Instance.cg, l)
		}
	default:
		b.run.pl = noPlacement
		b.desc.Placement = "none (no cap)"
		if os.Geteuid() == 0 {
			if b.run.acct, err = lookupAccount(eng.osUser()); err != nil {
				return nil, errorf(KindControl, "backup: oltplab runs as root and %s's tools must not: they need the unprivileged user %q (created by the engine's Debian package): %v",
					src.Engine, eng.osUser(), err)
			}
		}
	}
	id := groupID("backup")
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	if b.run.homeDir, err = makeRunDir(id, b.run.acct); err != nil {
		return nil, err
	}
	if !o.IOLimit.IsZero() {
		if err := b.capTools(id, o.IOLimit, o.Dirs); err != nil {
			return nil, err
		}
	}
	b.spec = b.restoreSpec(o)
	b.desc.RestoreSpec = b.spec
	b.desc.OSUser = fmt.Sprint(os.Geteuid())
	if b.run.acct != nil {
		b.desc.OSUser = b.run.acct.Name
	}
	return b, nil
}

// findTool looks for t in binDir (and its sibling bin, as MariaDB's
// server lives in sbin and its tools in bin) when it is given, else in
// t's own directories and on PATH. where says where it looked.
func findTool(t clientTool, binDir string) (path, where string) {
	if binDir != "" && !t.system {
		dirs := []string{binDir, filepath.Join(binDir, "..", "bin")}
		for _, d := range dirs {
			if p := filepath.Join(d, t.name); isExecutable(p) {
				return filepath.Clean(p), ""
			}
		}
		return "", binDir
	}
	return findBinary(t.name, t.dirs...), strings.Join(append(append([]string(nil), t.dirs...), "PATH"), ", ")
}

func methodNames(be backupEngine) []string {
	var out []string
	for _, m := range be.backupMethods() {
		out = append(out, string(m))
	}
	return out
}

// capTools makes the backups' own cgroup with l on the disks under dirs.
func (b *Backupper) capTools(id string, l IOLimit, dirs []string) error {
	var disks []string
	for _, d := range dirs {
		dev, err := deviceOfNearest(d)
		if err != nil {
			return errorf(KindDevice, "backup I/O cap: cannot find the block device under %s: %v", d, err)
		}
		disk, err := wholeDisk(dev)
		if err != nil {
			return errorf(KindDevice, "backup I/O cap: %s: %v", d, err)
		}
		if !contains(disks, disk) {
			disks = append(disks, disk)
		}
	}
	hs, err := liveHierarchies()
	if err != nil {
		return errorf(KindControl, "backup I/O cap: %v", err)
	}
	want := []string{ctlBlkio}
	if _, v1 := findV1(hs, ctlBlkio); !v1 {
		// cgroup v2 charges the writeback of buffered writes to the
		// group only when it has the memory controller too.
		want = append(want, ctlMemory)
	}
	cg, why := newCgroup(hs, id, want)
	b.cg = cg
	d, v2, ok := cg.dir(ctlBlkio)
	if !ok {
		return errorf(KindControl, "backup I/O cap needs a writable cgroup blkio (v1) or io (v2) controller: %s", why[ctlBlkio])
	}
	if err := cg.setIOLimit(disks, l); err != nil {
		return errorf(KindControl, "backup I/O cap: %v", err)
	}
	if err := cg.open(); err != nil {
		return errorf(KindControl, "backup I/O cap: %v", err)
	}
	b.run.pl = cg.placement()
	if b.src.Instance != nil {
		// The tools see the source's files as its server does.
		b.run.pl.layer = b.src.Instance.placement.layer
	}
	c := Control{Name: "io_limit", Requested: l.String() + " on " + strings.Join(disks, ", "), Method: method(v2, "blkio throttle"), Where: d}
	if v2 {
		c.Method = method(v2, "io.max")
	} else {
		c.Note = "v1 throttles direct and synchronous I/O only: oltplab syncs every backup and restored copy from inside the group"
	}
	b.desc.Controls = append(b.desc.Controls, c)
	b.desc.Placement = "a cgroup of the backups' own, " + c.Requested
	b.desc.WriteCap = writeCapOf(cg, l)
	return nil
}

// deviceOfNearest is the device under dir, or under its nearest existing
// parent when dir does not exist yet.
func deviceOfNearest(dir string) (dev sysstat.Device, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dev, err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, serr := os.Stat(d); serr == nil {
			return sysstat.DeviceOf(d)
		}
		if d == "/" {
			return sysstat.DeviceOf(d)
		}
	}
}

// restoreSpec is the spec restores start from.
func (b *Backupper) restoreSpec(o BackupOptions) Spec {
	var s Spec
	switch {
	case o.Restore != nil:
		s = *o.Restore
	case b.src.Instance != nil:
		s = b.src.Instance.spec
	default:
		s = Spec{IOLimit: o.IOLimit}
	}
	// The restored copy runs beside its source: a free port of its own.
	s.Name, s.Engine, s.DataDir, s.WALDir, s.Port = "restore", b.src.Engine, "", "", 0
	if !o.IOLimit.IsZero() {
		s.IOLimit = o.IOLimit // the restores go where the capped backups go
		s.Latency = nil       // which a latency layer's process would escape
	}
	if s.BinDir == "" && b.src.Instance != nil {
		s.BinDir = b.src.Instance.bins.Dir
	}
	if s.BinDir == "" {
		s.BinDir = b.src.BinDir
	}
	return s
}

// Info describes the Backupper.
func (b *Backupper) Info() BackupperInfo { return b.desc }

// Method is the method it uses.
func (b *Backupper) Method() BackupMethod { return b.method }

// Close removes the backups' cgroup and private directory. Backups and
// restored instances are the caller's.
func (b *Backupper) Close() error {
	err := b.cg.remove()
	b.cg = nil
	if b.run.homeDir != "" {
		err = errors.Join(err, os.RemoveAll(b.run.homeDir))
		b.run.homeDir = ""
	}
	return err
}

// Backup is one finished backup on disk.
type Backup struct {
	Method BackupMethod `json:"method"`
	// Dir is the backup's own directory, which oltplab created and
	// marked; Data, in it, is what the tool wrote (Dir/<method>).
	Dir     string    `json:"dir"`
	Data    string    `json:"data"`
	Bytes   int64     `json:"bytes"`
	Files   int       `json:"files"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// SyncedBy says who made it durable: the tool itself, or oltplab
	// (sync(1) at the tools' placement) after a tool that does not sync.
	SyncedBy string `json:"synced_by"`
}

// partialSuffix marks a backup being written: one whose oltplab was
// killed keeps the mark.
const partialSuffix = ".partial"

// Backup takes one backup into dir, which must not exist: oltplab creates
// it in its parent (claim.Within: made when missing; no link or directory
// another user could change on the way, no system directory) and marks it
// with m. The tool writes into dir/<method>.partial, which is made
// durable, then renamed to dir/<method> (Backup.Data). On failure or
// cancellation the tools are killed, dir is removed, and the source is as
// it was (every method only reads it).
func (b *Backupper) Backup(ctx context.Context, dir string, m claim.Mark) (bk Backup, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return bk, errorf(KindDirectory, "backup directory %s: %v", dir, err)
	}
	bk = Backup{Method: b.method, Dir: abs, Started: time.Now()}
	parent, err := claim.Within(filepath.Dir(abs), trust(b.run.acct), true)
	if err != nil {
		return bk, dirError("backup directory", filepath.Dir(abs), err)
	}
	defer parent.Close()
	name := filepath.Base(abs)
	bk.Dir = filepath.Join(parent.Path(), name)
	d, err := parent.MkdirMarked(name, m)
	if errors.Is(err, fs.ErrExist) {
		return bk, errorf(KindDirectory, "backup directory %s already exists", bk.Dir)
	}
	if err != nil {
		return bk, dirError("backup directory", bk.Dir, err)
	}
	defer d.Close()
	defer func() {
		if err != nil {
			if rerr := parent.Remove(name, m); rerr != nil {
				b.log.Warn("remove a partial backup", "dir", bk.Dir, "err", rerr)
			}
		}
	}()
	data := string(b.method)
	partial := data + partialSuffix
	uid, gid := -1, -1
	if b.run.acct != nil {
		uid, gid = b.run.acct.UID, b.run.acct.GID
	}
	pd, err := d.Mkdir(partial, 0o700, uid, gid)
	if err != nil {
		return bk, dirError("backup directory", bk.Dir, err)
	}
	pd.Close()
	if b.run.acct != nil {
		if err := reachable(filepath.Join(bk.Dir, partial), b.run.acct); err != nil {
			return bk, dirError("backup directory", bk.Dir, err)
		}
	}
	b.log.Debug("backup", "method", b.method, "dir", filepath.Join(bk.Dir, partial))
	synced, err := b.be.backup(ctx, b, filepath.Join(bk.Dir, partial))
	if err != nil {
		return bk, err
	}
	bk.SyncedBy = "the tool"
	if !synced {
		if err := b.run.syncTree(ctx, filepath.Join(bk.Dir, partial)); err != nil {
			return bk, err
		}
		bk.SyncedBy = "oltplab (sync(1) at the tools' placement)"
	}
	if err := d.Rename(partial, data); err != nil {
		return bk, fmt.Errorf("backup: %w", err)
	}
	if err := d.Sync(); err != nil {
		b.log.Warn("sync the backup's directory", "err", err)
	}
	if err := parent.Sync(); err != nil {
		b.log.Warn("sync the backup's parent directory", "err", err)
	}
	bk.Ended = time.Now()
	bk.Data = filepath.Join(bk.Dir, data)
	if bk.Bytes, bk.Files, err = treeSize(bk.Data); err != nil {
		return bk, fmt.Errorf("backup: size of %s: %w", bk.Data, err)
	}
	return bk, nil
}

// PrepareDirs makes the directories backups and restores go to (claim.Within,
// as Backup checks them) before the first backup, so that their devices
// can be watched from the start; a refused one is a KindDirectory error.
func (b *Backupper) PrepareDirs(dirs ...string) error {
	for _, dir := range dirs {
		d, err := claim.Within(dir, trust(b.run.acct), true)
		if err != nil {
			return dirError("directory", dir, err)
		}
		d.Close()
	}
	return nil
}

// RestoreReport is what a restore did, step by step.
type RestoreReport struct {
	Steps []RestoreStep `json:"steps"`
	// DirectCopy: the copy was oltplab's own, with direct I/O from inside
	// the write cap's group, so that a cgroup v1 cap held for it.
	DirectCopy bool `json:"direct_copy,omitempty"`
	// Bytes and Files are the restored data directory's.
	Bytes int64 `json:"bytes"`
	Files int   `json:"files"`
}

// RestoreStep is one step of a restore: prepare, copy, sync, init,
// pg_restore, checkpoint, start.
type RestoreStep struct {
	Name    string    `json:"name"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
}

// step runs fn as the named step of r.
func (r *RestoreReport) step(name string, fn func() error) error {
	s := RestoreStep{Name: name, Started: time.Now()}
	err := fn()
	s.Ended = time.Now()
	r.Steps = append(r.Steps, s)
	return err
}

// Restore brings bk up as a new managed instance on dataDir: a directory
// oltplab creates (or an empty one) and marks with m (claim.Take), the
// engine's restore tools into the engine's directory in it, then a server
// started on the restored files with the restore spec. The instance runs
// until it is stopped or ctx ends. On failure nothing of it is left
// running; dataDir is the caller's to remove.
func (b *Backupper) Restore(ctx context.Context, bk Backup, dataDir string, m claim.Mark) (*Instance, RestoreReport, error) {
	var r RestoreReport
	if bk.Method != b.method {
		return nil, r, errorf(KindSpec, "restore: a %s backup, this backupper restores %s", bk.Method, b.method)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, r, errorf(KindDirectory, "restore directory %s: %v", dataDir, err)
	}
	d, err := claim.Take(abs, m, claim.TakeOptions{Trust: trust(b.run.acct)})
	if err != nil {
		return nil, r, dirError("restore directory", dataDir, err)
	}
	defer d.Close()
	if err := engineDir(d, string(b.src.Engine), b.run.acct); err != nil {
		return nil, r, dirError("restore directory", dataDir, err)
	}
	if b.run.acct != nil {
		if err := reachable(filepath.Join(d.Path(), string(b.src.Engine)), b.run.acct); err != nil {
			return nil, r, dirError("restore directory", dataDir, err)
		}
	}
	spec := b.spec
	spec.DataDir = d.Path()
	inst, err := b.be.restore(ctx, b, bk, spec, &r)
	if err != nil {
		return nil, r, err
	}
	r.Bytes, r.Files, err = treeSize(inst.engineDir)
	if err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, r, fmt.Errorf("restore: size of %s: %w", inst.engineDir, err)
	}
	return inst, r, nil
}

// startRestored starts the restore's instance on files already in place
// (or initialises a new one), as the step named so.
func (b *Backupper) startRestored(ctx context.Context, step string, spec Spec, r *RestoreReport) (inst *Instance, err error) {
	err = r.step(step, func() error {
		inst, err = Start(ctx, spec, b.log)
		return err
	})
	return inst, err
}
