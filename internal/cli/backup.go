package cli

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"text/tabwriter"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

const backupSynopsis = `backup TARGET --to DIR [--cycles N] [--method M] [--jobs N] [--interval D]
       [--restore=false] [--restore-dir DIR] [--keep] [--write-iops N] [--write-mbps X] [--label L] [--json]

Timed backup and restore cycles of a TPC-C database with the engine's own tools:
  PostgreSQL  basebackup (default): pg_basebackup, a physical copy of the cluster;
              restored by copying it into a new managed instance (crash recovery)
              dump: pg_dump -Fd -j N of TARGET's database; restored with pg_restore -j N
  MariaDB     mariadb-backup: restored with --prepare and --copy-back into a new managed
              instance; the server's data directory must be on this host
  SQLite      online: SQLite's online backup API, restored the same way into a new file
  SQL Server  (no --method) BACKUP DATABASE ... WITH COPY_ONLY, CHECKSUM by the
              server into a file in --to, a directory on the server's file system;
              restored with RESTORE DATABASE as a new database, its files in
              --restore-dir (the server's too), checked and dropped; the backup file
              is removed where the server can (xp_delete_files, SQL Server 2019+).
              Not on a server without BACKUP DATABASE, such as Babelfish
Each cycle writes a new directory in --to (another device is the point), restores it
into a new directory of --restore-dir, checks the restored database (TPC-C 3.3.2,
stored as a check result) and removes both unless --keep. Per cycle: duration, bytes,
MB/s (10^6 bytes/s) of the backup and the restore, and what the devices under the
source, --to and --restore-dir did meanwhile. The tools run as the server's account
when oltplab runs as root. A failed or interrupted backup leaves the source as it
was, removes its partial output and stops any instance it started.
Restoring a PostgreSQL base backup needs a superuser role named oltplab in it
(managed instances have one). TARGET may also be given with --target.`

// backupOptions are the flags of `oltplab backup`.
type backupOptions struct {
	target  targetFlags
	results storeFlags
	opts    scenario.BackupOptions
	method  string
	binDir  string
	json    bool
}

func runBackup(ctx context.Context, a *app, args []string) error {
	o := backupOptions{opts: scenario.DefaultBackupOptions()}
	s := &o.opts
	fs := newFlagSet("backup")
	o.target.register(fs, a.env)
	o.results.register(fs, a.env)
	fs.IntVar(&s.Cycles, "cycles", s.Cycles, "`N` backup (and restore) cycles")
	fs.StringVar(&s.To, "to", "", "`DIR` the backups go to, each cycle's in a new directory oltplab marks and removes (required; another device is the point)")
	fs.StringVar(&o.method, "method", "", "`METHOD`: basebackup or dump (PostgreSQL), mariadb-backup (MariaDB), online (SQLite); default the first")
	fs.IntVar(&s.Jobs, "jobs", min(runtime.NumCPU(), 8), "`N` parallel jobs of pg_dump/pg_restore (--method dump) and of mariadb-backup's copies")
	fs.Lookup("jobs").DefValue = "the CPUs, at most 8" // the help is the same on every host
	fs.DurationVar(&s.Interval, "interval", 0, "pause between cycles, e.g. 100s")
	fs.BoolVar(&s.Restore, "restore", s.Restore, "restore each backup, check the restored database, then remove it")
	fs.StringVar(&s.RestoreDir, "restore-dir", "", "`DIR` restores go to (default: --to)")
	fs.BoolVar(&s.Keep, "keep", false, "keep each cycle's backup and restored copy")
	fs.Int64Var(&s.IOLimit.ReadIOPS, "read-iops", 0, "cap the backup and restore tools' reads at `N` IOPS on the disks under --to and --restore-dir (cgroup), restored instances too")
	fs.Int64Var(&s.IOLimit.WriteIOPS, "write-iops", 0, "cap their writes at `N` IOPS (a slower backup device emulated)")
	fs.Float64Var(&s.IOLimit.ReadMBps, "read-mbps", 0, "cap their reads at `MB/s` (10^6 bytes per second)")
	fs.Float64Var(&s.IOLimit.WriteMBps, "write-mbps", 0, "cap their writes at `MB/s`")
	fs.StringVar(&o.binDir, "bin-dir", "", "`DIR` of the engine's programs (default: found, e.g. /usr/lib/postgresql/15/bin)")
	fs.StringVar(&s.Label, "label", "", "label stored with the result")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	pos, err := a.parseWithArgs(fs, backupSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	if err := checkLabel("backup", s.Label); err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return usageErrorf("backup: want one TARGET, got %d (see `oltplab backup --help`)", len(pos))
	case len(pos) == 1 && o.target.target != "" && pos[0] != o.target.target:
		return usageErrorf("backup: TARGET given twice (as an argument and with --target)")
	case len(pos) == 1:
		o.target.target = pos[0]
	}
	if err := s.Method.UnmarshalText([]byte(o.method)); err != nil {
		return usageErrorf("backup: %v", err)
	}
	if err := s.Validate(); err != nil {
		return usageErrorf("backup: %v", err)
	}
	return a.withTarget(ctx, o.results, o.target, func(st *store.Store, db dialect.Database, tg dialect.Target) error {
		return a.backup(ctx, st, db, tg, o)
	})
}

// passwordEnv is where a target scheme's tools would find a password
// given to oltplab by the environment: the tools run with a clean one.
var passwordEnv = map[string]string{"postgres": "PGPASSWORD", "mysql": "MYSQL_PWD"}

func (a *app) backup(ctx context.Context, st *store.Store, db dialect.Database, tg dialect.Target, o backupOptions) error {
	if !tg.PasswordSet {
		if v, ok := a.env[passwordEnv[tg.Scheme]]; ok {
			tg.Password, tg.PasswordSet = dialect.Secret(v), true
		}
	}
	s := o.opts
	if spec, name := a.managedSpec(tg); spec != nil {
		// A restore starts an instance like the one backed up.
		s.RestoreSpec = spec
		a.log.Info("restores start instances like managed instance " + name)
	}
	obs := scenario.Observer{Note: func(m string) { fmt.Fprintln(a.errw(), m) }}
	res, err := a.scenarioEnv(st, obs).Backup(ctx, scenario.BackupSource{DB: db, Target: tg, BinDir: o.binDir}, s)
	if res.RunID == 0 {
		return err
	}
	if o.json {
		if jerr := writeJSON(a.out(), res); jerr != nil {
			return jerr
		}
	} else {
		a.printBackup(res, st.Path())
	}
	switch {
	case err == nil && res.Stats.ChecksFailed > 0:
		fmt.Fprintf(a.errw(), "oltplab: the restored database failed the consistency check in %d cycle(s)\n", res.Stats.ChecksFailed)
		return errSilent{exitCheckFailed}
	case err == nil:
		return nil
	case res.Interrupted:
		return withCode(exitInterrupted, fmt.Errorf("interrupted: the %d cycle(s) that finished are stored as result %d, marked %s; the partial backup was removed",
			finishedCycles(res.Cycles), res.RunID, res.Status))
	}
	return err
}

// managedSpec is the spec of the running managed instance (`oltplab
// instance start`) that serves tg, if any.
func (a *app) managedSpec(tg dialect.Target) (*instance.Spec, string) {
	entries, _, err := a.listInstances()
	if err != nil {
		return nil, ""
	}
	for _, e := range entries {
		if !e.Stale && e.Target != "" && sameServer(e.Target, tg) {
			spec := e.Description.Spec
			return &spec, e.Name
		}
	}
	return nil, ""
}

// sameServer reports whether a registered target reaches tg's server.
func sameServer(registered string, tg dialect.Target) bool {
	r, err := dialect.ParseTarget(registered, "")
	return err == nil && tg.URL != nil && r.Scheme == tg.Scheme && r.URL.Host == tg.URL.Host
}

func finishedCycles(cs []summary.BackupCycle) int {
	n := 0
	for _, c := range cs {
		if c.Finished() {
			n++
		}
	}
	return n
}

// roleDevice is the device of a phase's host summary that holds role.
func roleDevice(h *sampler.StepSummary, role string) *sampler.DeviceSummary {
	if h == nil {
		return nil
	}
	for i, d := range h.Devices {
		if slices.Contains(d.Roles, role) {
			return &h.Devices[i]
		}
	}
	return nil
}

// printBackup renders a backup scenario: one line per cycle, then the
// spread over the cycles.
func (a *app) printBackup(r scenario.BackupOutcome, storePath string) {
	w := a.out()
	fmt.Fprintf(w, "\nbackup of %s with %s", r.Source, r.Info.Method)
	if t := r.Info.Tools; t != nil {
		fmt.Fprintf(w, " (%s), tools run as %s, %s", t.Version, t.OSUser, t.Placement)
	}
	fmt.Fprintln(w)
	for _, role := range []string{"source", "backup", "restore"} {
		if d, ok := r.Devices[role]; ok {
			disk := d.Name
			if disk == "" {
				disk = d.MountSource
			}
			fmt.Fprintf(w, "  %-8s %s (%s on %s)\n", role+":", d.Path, d.FSType, disk)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cycle\tbackup s\tMB\tMB/s\tdev w MB/s\tw IOPS\tlat ms\trestore s\tMB\tMB/s\tdev w MB/s\tlat ms\tcheck\t")
	dev := func(h *sampler.StepSummary, role string) string {
		d := roleDevice(h, role)
		if d == nil {
			return "-\t-\t-"
		}
		return fmt.Sprintf("%.1f\t%.0f\t%.2f", d.WriteMBps, d.WriteIOPS, d.LatencyMillis)
	}
	for _, c := range r.Cycles {
		b := c.Backup
		line := fmt.Sprintf("%d\t", c.Cycle)
		if c.Failed == "backup" {
			line += fmt.Sprintf("FAILED after %.1f s\t\t\t\t\t\t\t\t\t\t\t\t", b.Seconds)
			fmt.Fprintln(tw, line)
			continue
		}
		line += fmt.Sprintf("%.1f\t%.1f\t%.1f\t%s\t", b.Seconds, float64(b.Bytes)/1e6, b.MBps, dev(b.Host, "backup"))
		switch rs := c.Restore; {
		case rs == nil:
			line += "-\t-\t-\t-\t-\t"
		case c.Failed == "restore":
			line += fmt.Sprintf("FAILED after %.1f s\t\t\t\t\t", rs.Seconds)
		default:
			d := roleDevice(rs.Host, "restore")
			dw, dl := "-", "-"
			if d != nil {
				dw, dl = fmt.Sprintf("%.1f", d.WriteMBps), fmt.Sprintf("%.2f", d.LatencyMillis)
			}
			line += fmt.Sprintf("%.1f\t%.1f\t%.1f\t%s\t%s\t", rs.Seconds, float64(rs.Bytes)/1e6, rs.MBps, dw, dl)
		}
		switch ch := c.Check; {
		case c.Failed == "check":
			line += "FAILED\t"
		case ch == nil:
			line += "-\t"
		case ch.Passed:
			line += fmt.Sprintf("pass (%d)\t", ch.RunID)
		default:
			line += fmt.Sprintf("FAIL (%d)\t", ch.RunID)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "MB: 10^6 bytes; backup MB/s: its size over its time; restore MB/s: the restored database's size over the restore's time")
	fmt.Fprintln(w, "dev: the device under --to (backup) or --restore-dir (restore) as the kernel saw it (all I/O on it, not only the tools')")
	for _, c := range r.Cycles {
		if c.Error != "" {
			fmt.Fprintf(w, "cycle %d %s failed: %s\n", c.Cycle, c.Failed, c.Error)
		}
		if rs := c.Restore; rs != nil && len(rs.Steps) > 0 {
			fmt.Fprintf(w, "cycle %d restore steps:", c.Cycle)
			for _, s := range rs.Steps {
				fmt.Fprintf(w, " %s %.1f s", s.Name, s.Seconds)
			}
			fmt.Fprintln(w)
		}
	}
	st := r.Stats
	if st.BackupSeconds.N > 1 {
		fmt.Fprintf(w, "backup over %d cycles: %.1f s mean (sd %.1f, %.1f..%.1f), %.1f MB/s mean (%.1f..%.1f)\n", st.BackupSeconds.N,
			st.BackupSeconds.Mean, st.BackupSeconds.StdDev, st.BackupSeconds.Min, st.BackupSeconds.Max,
			st.BackupMBps.Mean, st.BackupMBps.Min, st.BackupMBps.Max)
	}
	if st.RestoreSeconds.N > 1 {
		fmt.Fprintf(w, "restore over %d cycles: %.1f s mean (sd %.1f, %.1f..%.1f), %.1f MB/s mean (%.1f..%.1f)\n", st.RestoreSeconds.N,
			st.RestoreSeconds.Mean, st.RestoreSeconds.StdDev, st.RestoreSeconds.Min, st.RestoreSeconds.Max,
			st.RestoreMBps.Mean, st.RestoreMBps.Min, st.RestoreMBps.Max)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: only the cycles above finished")
	}
	a.printMonitorSummary(r.Monitor)
	fmt.Fprintf(w, "stored as result %d (%s) in %s\n", r.RunID, r.Status, storePath)
}
