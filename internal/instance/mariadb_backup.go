package instance

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

var _ backupEngine = mariadbEngine{}

// mariadbBackupPackage provides mariadb-backup (not a dependency of the
// server).
const mariadbBackupPackage = "mariadb-backup"

func (mariadbEngine) backupMethods() []BackupMethod { return []BackupMethod{MariaBackup} }

func (mariadbEngine) backupTools(BackupMethod) []clientTool {
	return []clientTool{{"mariadb-backup", mariadbBackupPackage, []string{"/usr/bin", "/usr/local/mysql/bin"}, false}}
}

// loopback reports whether host names this host.
func loopback(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (mariadbEngine) backup(ctx context.Context, b *Backupper, dir string) (bool, error) {
	tg := b.src.Target
	if h := tg.URL.Hostname(); !loopback(h) {
		return false, errorf(KindSpec, "backup with mariadb-backup: it copies the server's data directory, which must be on this host; %s is on %s", tg, h)
	}
	// The connection comes from a private defaults file, so that the
	// password is on no command line; --defaults-file must come first and
	// keeps the host's my.cnf out.
	var cnf strings.Builder
	fmt.Fprintf(&cnf, "[client]\nprotocol=tcp\nhost=%s\n", tg.URL.Hostname())
	if p := tg.URL.Port(); p != "" {
		fmt.Fprintf(&cnf, "port=%s\n", p)
	}
	if tg.URL.User != nil {
		fmt.Fprintf(&cnf, "user=%s\n", tg.URL.User.Username())
	}
	if tg.PasswordSet {
		fmt.Fprintf(&cnf, "password=%s\n", tg.Password.Reveal())
	}
	cnfFile, err := b.run.writePrivate("source.cnf", cnf.String())
	if err != nil {
		return false, err
	}
	args := []string{"--defaults-file=" + cnfFile, "--backup", "--target-dir=" + dir}
	// Without --datadir mariadb-backup asks the server for it.
	if b.src.DataDir != "" {
		args = append(args, "--datadir="+b.src.DataDir)
	}
	if i := b.src.Instance; i != nil && i.engineWALDir != "" {
		args = append(args, "--innodb-log-group-home-dir="+i.engineWALDir)
	}
	if b.jobs > 1 {
		args = append(args, "--parallel="+strconv.Itoa(b.jobs))
	}
	// mariadb-backup does not sync what it wrote: Backupper.Backup does.
	return false, b.run.run(ctx, "backup with mariadb-backup", b.tools["mariadb-backup"], args)
}

func (mariadbEngine) restore(ctx context.Context, b *Backupper, bk Backup, spec Spec, r *RestoreReport) (*Instance, error) {
	tool := b.tools["mariadb-backup"]
	// --prepare applies the redo log copied with the backup to its data
	// files, in place, making them consistent as of the backup's end.
	err := r.step("prepare", func() error {
		return b.run.run(ctx, "restore: mariadb-backup --prepare", tool, []string{"--no-defaults", "--prepare", "--target-dir=" + bk.Data})
	})
	if err != nil {
		return nil, err
	}
	engineDir := filepath.Join(spec.DataDir, string(MariaDB))
	err = r.step("copy", func() error {
		args := []string{"--no-defaults", "--copy-back", "--target-dir=" + bk.Data, "--datadir=" + engineDir}
		if b.jobs > 1 {
			args = append(args, "--parallel="+strconv.Itoa(b.jobs))
		}
		return b.run.run(ctx, "restore: mariadb-backup --copy-back", tool, args)
	})
	if err != nil {
		return nil, err
	}
	if err := r.step("sync", func() error { return b.run.syncTree(ctx, engineDir) }); err != nil {
		return nil, err
	}
	return b.startRestored(ctx, "start", spec, r)
}
