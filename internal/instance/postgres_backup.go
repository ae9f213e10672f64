package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

var _ backupEngine = postgresEngine{}

// postgresClientPackage provides pg_basebackup, pg_dump and pg_restore
// (postgresql-15 depends on it).
const postgresClientPackage = "postgresql-client-15"

func (postgresEngine) backupMethods() []BackupMethod { return []BackupMethod{BaseBackup, Dump} }

// pgClientDirs are where Debian installs each major version's programs,
// 15 first, then the newest.
func pgClientDirs() []string {
	dirs := []string{"/usr/lib/postgresql/15/bin"}
	others, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(others, func(a, b int) bool { return pgMajor(others[a]) > pgMajor(others[b]) })
	for _, d := range others {
		if !contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func (postgresEngine) backupTools(m BackupMethod) []clientTool {
	dirs := pgClientDirs()
	if m == Dump {
		return []clientTool{{"pg_dump", postgresClientPackage, dirs, false}, {"pg_restore", postgresClientPackage, dirs, false}}
	}
	return []clientTool{{"pg_basebackup", postgresClientPackage, dirs, false}, {"cp", "coreutils", []string{"/usr/bin", "/bin"}, true}}
}

// pgConn is the connection string a PostgreSQL tool is given (the
// target's URL, without its password) and the environment that gives it
// the password: a private password file, never the command line.
func (b *Backupper) pgConn(tg dialect.Target, name string) (string, []string, error) {
	u := *tg.URL // holds no password: dialect.Target keeps it apart
	env := []string{}
	if tg.PasswordSet {
		pw := strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace(tg.Password.Reveal())
		p, err := b.run.writePrivate(name+".pgpass", "*:*:*:*:"+pw+"\n")
		if err != nil {
			return "", nil, err
		}
		env = append(env, "PGPASSFILE="+p)
	} else if pf := userPassFile(); pf != "" {
		// libpq's password file as oltplab's user has it: the tools run
		// with a HOME of their own, maybe as another account.
		if content, err := os.ReadFile(pf); err == nil {
			p, err := b.run.writePrivate(name+".pgpass", string(content))
			if err != nil {
				return "", nil, err
			}
			env = append(env, "PGPASSFILE="+p)
		}
	}
	return u.String(), env, nil
}

// userPassFile is the password file libpq would read for oltplab's user.
func userPassFile() string {
	if f := os.Getenv("PGPASSFILE"); f != "" {
		return f
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".pgpass")
	}
	return ""
}

// databaseOf is the database a URL target names.
func databaseOf(tg dialect.Target) string { return strings.TrimPrefix(tg.URL.Path, "/") }

func (postgresEngine) backup(ctx context.Context, b *Backupper, dir string) (bool, error) {
	conn, env, err := b.pgConn(b.src.Target, "source")
	if err != nil {
		return false, err
	}
	if b.method == Dump {
		args := []string{"--format=directory", "--file=" + dir, "--dbname=" + conn, "--no-password"}
		if b.jobs > 1 {
			args = append(args, "--jobs="+strconv.Itoa(b.jobs))
		}
		// pg_dump syncs its output before it exits (PostgreSQL 12+).
		return true, b.run.run(ctx, "backup with pg_dump", b.tools["pg_dump"], args, env...)
	}
	// A fast checkpoint starts the copy at once instead of after a spread
	// one; WAL is streamed alongside so the copy is self-contained; the
	// files are synced by pg_basebackup before it exits.
	args := []string{"--dbname=" + conn, "--pgdata=" + dir, "--format=plain", "--wal-method=stream",
		"--checkpoint=fast", "--label=oltplab", "--no-password"}
	return true, b.run.run(ctx, "backup with pg_basebackup", b.tools["pg_basebackup"], args, env...)
}

func (postgresEngine) restore(ctx context.Context, b *Backupper, bk Backup, spec Spec, r *RestoreReport) (inst *Instance, err error) {
	defer func() {
		if err != nil && inst != nil {
			_ = inst.Stop(context.WithoutCancel(ctx))
			inst = nil
		}
	}()
	if b.method == Dump {
		// A new cluster, then the dump into the database it came from.
		if inst, err = b.startRestored(ctx, "init", spec, r); err != nil {
			return nil, err
		}
		tg := inst.Target()
		if name := databaseOf(b.src.Target); name != "" && name != DatabaseName {
			if err := pgExec(ctx, tg, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
				return inst, fmt.Errorf("restore: create database %s: %w", name, err)
			}
			tg.URL.Path = "/" + name
		}
		err = r.step("pg_restore", func() error {
			conn, env, err := b.pgConn(tg, "restore")
			if err != nil {
				return err
			}
			// Objects belong to the restoring superuser: the source's
			// roles need not exist in the new cluster.
			args := []string{"--dbname=" + conn, "--no-owner", "--no-privileges", "--no-password"}
			if b.jobs > 1 {
				args = append(args, "--jobs="+strconv.Itoa(b.jobs))
			}
			return b.run.run(ctx, "restore with pg_restore", b.tools["pg_restore"], append(args, bk.Data), env...)
		})
		if err != nil {
			return inst, err
		}
		// The restored rows are durable once a checkpoint wrote them out.
		err = r.step("checkpoint", func() error { return pgExec(ctx, tg, "CHECKPOINT") })
		return inst, err
	}
	// A base backup is a data directory: copied into place (the engine's
	// directory Restore made, empty, the tools' account's), synced, then
	// started; the server recovers from the WAL streamed with it. A copy of
	// a cluster oltplab does not manage holds the source's roles only: it
	// is entered as the source's own.
	if b.src.Instance == nil {
		if spec.login, err = sourceLogin(b.src.Target); err != nil {
			return nil, err
		}
	}
	engineDir := filepath.Join(spec.DataDir, string(Postgres))
	err = r.step("copy", func() error {
		if b.copyDirectly() {
			r.DirectCopy = true
			return copyDirect(ctx, b.run.pl, b.run.acct, bk.Data, engineDir)
		}
		return b.run.run(ctx, "restore: copy the base backup", b.tools["cp"], []string{"-a", "--", bk.Data + "/.", engineDir + "/"})
	})
	if err != nil {
		return nil, err
	}
	if err := r.step("sync", func() error { return b.run.syncTree(ctx, engineDir) }); err != nil {
		return nil, err
	}
	return b.startRestored(ctx, "start", spec, r)
}

// restoredLogin is how oltplab enters a restored copy of a PostgreSQL
// cluster it does not manage: the copy's catalogue holds the source's
// roles and none of oltplab's, so the instance is started, checked and
// measured as the source's own role (the one its target names), in the
// source's database, over the instance's private socket only (peer
// authentication of oltplab's OS user mapped to that role: no password,
// no TCP login). Without it the instance would wait for a role of its
// own that never comes.
type restoredLogin struct{ role, database string }

// sourceLogin is the login of a restored copy of tg's cluster: tg's role
// and database, libpq's defaults filled in.
func sourceLogin(tg dialect.Target) (*restoredLogin, error) {
	cfg, err := pgx.ParseConfig(tg.URL.String())
	if err != nil {
		return nil, errorf(KindSpec, "restore: the source target: %v", err)
	}
	if strings.ContainsAny(cfg.User, "\"\n\r") || cfg.User == "" {
		return nil, errorf(KindSpec, "restore: the source's role %q cannot be named in pg_ident.conf", cfg.User)
	}
	return &restoredLogin{role: cfg.User, database: cfg.Database}, nil
}

// quotedRole is the role as pg_ident.conf takes it: quoted, its case kept.
func (l *restoredLogin) quotedRole() string { return `"` + l.role + `"` }

// checkSource refuses a base backup as a role that may not take one
// (neither superuser nor REPLICATION): pg_basebackup would fail on the
// replication connection, a backup failure rather than the missing
// privilege it is (dialect.ErrNotPermitted). A source that cannot be
// asked is left to the tool, which reports it.
func (postgresEngine) checkSource(ctx context.Context, b *Backupper) error {
	if b.method != BaseBackup {
		return nil
	}
	cfg, err := pgx.ParseConfig(b.src.Target.URL.String())
	if err != nil {
		return nil
	}
	if b.src.Target.PasswordSet {
		cfg.Password = b.src.Target.Password.Reveal()
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var may bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user").Scan(&may); err != nil || may {
		return nil
	}
	return fmt.Errorf("backup: role %s may not take a base backup: pg_basebackup needs a superuser or a role with REPLICATION "+
		"(ALTER ROLE %s REPLICATION), or take a dump (--method dump): %w",
		pgx.Identifier{cfg.User}.Sanitize(), pgx.Identifier{cfg.User}.Sanitize(), dialect.ErrNotPermitted)
}

// pgExec runs one statement on a PostgreSQL target.
func pgExec(ctx context.Context, tg dialect.Target, stmt string) error {
	cfg, err := pgx.ParseConfig(tg.URL.String())
	if err != nil {
		return fmt.Errorf("connect to %s: %w", tg, err)
	}
	cfg.Password = tg.Password.Reveal()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to %s: %s", tg, pgErrText(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s", pgErrText(err))
	}
	return nil
}
