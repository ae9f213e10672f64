package instance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

// postgresEngine runs PostgreSQL: initdb once, then the postgres binary
// itself (no pg_ctl) with every setting on its command line, and pg_hba /
// pg_ident files of its own in the run directory.
type postgresEngine struct{}

// postgresPackage is the Debian package oltplab is tested with.
const postgresPackage = "postgresql-15"

func (postgresEngine) server() bool { return true }

// postgresRefused are the settings a spec must not give a managed
// PostgreSQL (refused.go), by the server's own names. From the groups of
// `postgres --describe-config`: every setting of File Locations and SSL,
// of Authentication but authentication_timeout (which opens nothing), and
// of Connection Settings that concerns listening or the socket; the
// library settings, which can load code from any path (a library named
// without a path comes from the server's own directory and is allowed:
// shared_preload_libraries = pg_stat_statements); the commands archiving
// and recovery run; the log's own files; the connection a standby makes to
// its primary; and the configuration file directives, which read other
// files. TestSettingTablesKnowTheServer holds the table against the
// installed server's groups.
var postgresRefused = []refusal{
	{name: "listen_addresses", why: whyListening},
	{name: "bonjour", why: whyListening}, // advertises the server on the network
	{name: "bonjour_name", why: whyListening},
	{name: "port", why: whyPort},
	{name: "unix_socket_", prefix: true, why: whySocket}, // directories, group, permissions
	{name: "hba_file", why: whyAuth},
	{name: "ident_file", why: whyAuth},
	{name: "password_encryption", why: whyAuth},
	{name: "db_user_namespace", why: whyAuth},
	{name: "krb_", prefix: true, why: whyAuth},
	{name: "ssl", why: whyAuth},
	{name: "ssl_", prefix: true, why: whyAuth}, // key and certificate files, the passphrase command
	{name: "data_directory", why: whyFiles},
	{name: "config_file", why: whyFiles},
	{name: "external_pid_file", why: whyFiles},
	{name: "include", why: whyFiles}, // configuration file directives
	{name: "include_dir", why: whyFiles},
	{name: "include_if_exists", why: whyFiles},
	{name: "log_directory", why: whyFiles},
	{name: "log_filename", why: whyFiles},
	{name: "log_file_mode", why: whyFiles},
	{name: "stats_temp_directory", why: whyFiles}, // PostgreSQL 14 and older
	{name: "promote_trigger_file", why: whyFiles},
	{name: "shared_preload_libraries", why: whyLibrary, allow: plainName},
	{name: "session_preload_libraries", why: whyLibrary, allow: plainName},
	{name: "local_preload_libraries", why: whyLibrary, allow: plainName},
	{name: "jit_provider", why: whyLibrary, allow: plainName},
	{name: "dynamic_library_path", why: whyCode},
	{name: "extension_destdir", why: whyCode},
	{name: "archive_library", why: whyCode}, // its own settings name directories (basic_archive)
	{name: "archive_command", why: whyCommand},
	{name: "restore_command", why: whyCommand},
	{name: "archive_cleanup_command", why: whyCommand},
	{name: "recovery_end_command", why: whyCommand},
	{name: "primary_conninfo", why: whyHosts},
	{name: "shared_buffers", why: whyMemory},
	{name: "max_connections", why: whyMaxConns},
}

// postgresName is a setting name as the server reads it from its command
// line: GUC names are case-insensitive, and `-c` takes '-' for '_'.
func postgresName(k string) string { return strings.ReplaceAll(strings.ToLower(k), "-", "_") }

func (postgresEngine) settingKey(k string) string { return postgresName(k) }

func (postgresEngine) refused(k, v string) (string, refusal, bool) {
	n := postgresName(k)
	r, ok := findRefusal(postgresRefused, n)
	return n, r, ok && (r.allow == nil || !r.allow(v))
}

func (postgresEngine) locate(binDir string) (Binaries, error) {
	dirs := []string{binDir}
	if binDir == "" {
		dirs = []string{"/usr/lib/postgresql/15/bin"}
		others, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(others, func(a, b int) bool { return pgMajor(others[a]) > pgMajor(others[b]) })
		dirs = append(dirs, others...)
	}
	for _, d := range dirs {
		server, initdb := filepath.Join(d, "postgres"), filepath.Join(d, "initdb")
		if isExecutable(server) && isExecutable(initdb) {
			return Binaries{Dir: d, Server: server, Init: initdb}, nil
		}
	}
	if binDir == "" {
		if server := findBinary("postgres"); server != "" {
			d := filepath.Dir(server)
			if initdb := filepath.Join(d, "initdb"); isExecutable(initdb) {
				return Binaries{Dir: d, Server: server, Init: initdb}, nil
			}
		}
	}
	where := "/usr/lib/postgresql/*/bin or PATH"
	if binDir != "" {
		where = binDir
	}
	return Binaries{}, errorf(KindBinary, "PostgreSQL server binaries (postgres, initdb) not found in %s: install the Debian package %s", where, postgresPackage)
}

// pgMajor is the major version in /usr/lib/postgresql/MAJOR/bin.
func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func (postgresEngine) osUser() string { return "postgres" }

func (postgresEngine) initialised(i *Instance) (bool, error) {
	if _, err := os.Stat(filepath.Join(i.engineDir, "PG_VERSION")); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return false, errorf(KindDirectory, "data_dir %s: %v", i.engineDir, unwrapPath(err))
		}
		if entries, err := os.ReadDir(i.engineDir); err == nil && len(entries) > 0 {
			return false, errorf(KindDirectory, "data_dir: %s is not empty and holds no PostgreSQL cluster", i.engineDir)
		}
		return false, nil
	}
	link, err := os.Readlink(filepath.Join(i.engineDir, "pg_wal"))
	switch {
	case i.engineWALDir == "" && err == nil:
		return false, errorf(KindSpec, "data_dir %s holds a cluster whose WAL is in %s: give wal_dir %s", i.engineDir, link, filepath.Dir(link))
	case i.engineWALDir != "" && err != nil:
		return false, errorf(KindSpec, "data_dir %s holds a cluster whose WAL is in its data directory, not in wal_dir %s", i.engineDir, i.walDir)
	case i.engineWALDir != "" && filepath.Clean(link) != i.engineWALDir:
		return false, errorf(KindSpec, "data_dir %s holds a cluster whose WAL is in %s, not in %s", i.engineDir, link, i.engineWALDir)
	}
	return true, nil
}

func (postgresEngine) initialise(ctx context.Context, i *Instance) error {
	args := []string{"-D", i.engineDir, "-U", UserName, "--auth-local=peer", "--auth-host=reject",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-instructions",
		// Nothing is measured on a fresh cluster: its files reach the disk
		// with the first checkpoint, and a crash before that means initdb again.
		"--no-sync"}
	if i.engineWALDir != "" {
		args = append(args, "--waldir="+i.engineWALDir)
	}
	return i.runTool(ctx, "initdb", i.command(i.bins.Init, args...))
}

// postgresIOSettings keep PostgreSQL's writes its own, issued by the
// server's processes so that a cgroup v1 throttle sees them (v1 does not
// attribute the kernel's background writeback): the WAL is fdatasync'ed by
// the process that wrote it (the Linux default), and data pages are handed
// to the kernel (sync_file_range) by whichever process wrote them after at
// most 256-512 kB: checkpointer and background writer do so by default on
// Linux, backends only with backend_flush_after (default 0, when a dirty
// page could age into the kernel's writeback before a checkpoint fsyncs
// it). They are set for every managed instance, capped or not, so that a
// capped and an uncapped run differ only in the cap; measured with
// BenchmarkPostgresWriteAttribution.
var postgresIOSettings = []setting{
	{"wal_sync_method", "fdatasync"},
	{"backend_flush_after", "256kB"},
	{"bgwriter_flush_after", "512kB"},
	{"checkpoint_flush_after", "256kB"},
	{"wal_writer_flush_after", "1MB"},
}

// postgresTimingSettings make the server time its own I/O, so that what
// it waited for is known from its side too (pg_stat_database
// blk_read_time and blk_write_time, pg_stat_wal wal_write_time and
// wal_sync_time, which the wait sampler reads): two clock reads per
// I/O, cheap with the kernel's vDSO clock. track_wal_io_timing is
// PostgreSQL 14's.
func postgresTimingSettings(version string) []setting {
	s := []setting{{"track_io_timing", "on"}}
	if v := postgresMajor(version); v == 0 || v >= 14 {
		s = append(s, setting{"track_wal_io_timing", "on"})
	}
	return s
}

// postgresMajor is the major version in `postgres --version` ("postgres
// (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"), 0 when unknown.
func postgresMajor(version string) int {
	f := strings.Fields(version)
	for i, w := range f {
		if w == "(PostgreSQL)" && i+1 < len(f) {
			major, _, _ := strings.Cut(f[i+1], ".")
			n, _ := strconv.Atoi(major)
			return n
		}
	}
	return 0
}

func (postgresEngine) ioLimitNote() string {
	return "WAL fdatasync'ed and data pages pushed out (*_flush_after) by the server's own processes"
}

func (postgresEngine) memorySetting() string { return "shared_buffers" }

func (postgresEngine) settings(i *Instance) []setting {
	s := []setting{
		{"listen_addresses", "127.0.0.1"},
		{"port", strconv.Itoa(i.port)},
		{"unix_socket_directories", i.runDir},
		{"hba_file", filepath.Join(i.runDir, "pg_hba.conf")},
		{"ident_file", filepath.Join(i.runDir, "pg_ident.conf")},
	}
	if i.spec.MaxConnections > 0 {
		s = append(s, setting{"max_connections", strconv.Itoa(i.spec.MaxConnections + ConnectionReserve)})
	}
	if i.spec.Memory > 0 {
		s = append(s, setting{"shared_buffers", strconv.FormatInt(i.spec.Memory.Bytes()/1024, 10) + "kB"})
	}
	// Backups (pg_basebackup) need replication connections.
	s = append(s, setting{"wal_level", "replica"}, setting{"max_wal_senders", "4"})
	s = append(s, postgresIOSettings...)
	s = append(s, postgresTimingSettings(i.bins.Version)...)
	return withSpecSettings(s, i.spec.Settings)
}

func (postgresEngine) prepare(i *Instance) ([]string, error) {
	hba := "# oltplab: peer on the private socket, SCRAM on loopback, replication for backups\n" +
		"local all         all     peer map=oltplab\n" +
		"local replication all     peer map=oltplab\n" +
		"host  all         " + UserName + " 127.0.0.1/32 scram-sha-256\n" +
		"host  replication " + UserName + " 127.0.0.1/32 scram-sha-256\n"
	role := UserName
	if l := i.spec.login; l != nil {
		// A copy of a cluster oltplab does not manage: its own role, over
		// the private socket only.
		hba = "# oltplab: a restored copy, entered as the source's role over the private socket only\n" +
			"local all         all     peer map=oltplab\n"
		role = l.quotedRole()
	}
	ident := "# OS users that may connect as " + role + " over the socket\n"
	for _, u := range osUserNames(i) {
		ident += fmt.Sprintf("oltplab %s %s\n", u, role)
	}
	if _, err := i.writePrivate("pg_hba.conf", hba); err != nil {
		return nil, err
	}
	if _, err := i.writePrivate("pg_ident.conf", ident); err != nil {
		return nil, err
	}
	args := []string{"-D", i.engineDir}
	for _, s := range i.settings {
		args = append(args, "-c", s.name+"="+s.value)
	}
	return args, nil
}

// osUserNames are the OS users mapped to the database superuser: the one
// running oltplab and the server's.
func osUserNames(i *Instance) []string {
	var names []string
	if u, err := user.Current(); err == nil {
		names = append(names, u.Username)
	}
	if i.acct != nil && !contains(names, i.acct.Name) {
		names = append(names, i.acct.Name)
	}
	return names
}

// PostgreSQL's postmaster shuts down fast on SIGINT (rolls back, checkpoints)
// and immediately on SIGQUIT (kills its workers, exits; recovery at the
// next start).
func (postgresEngine) stopSignal() syscall.Signal  { return syscall.SIGINT }
func (postgresEngine) deathSignal() syscall.Signal { return syscall.SIGQUIT }

func (postgresEngine) ready(ctx context.Context, i *Instance) (map[string]string, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable connect_timeout=5",
		i.runDir, i.port, UserName))
	if err != nil {
		return nil, err
	}
	if l := i.spec.login; l != nil {
		cfg.User, cfg.Database = l.role, l.database
	}
	var conn *pgx.Conn
	for {
		if conn, err = pgx.ConnectConfig(ctx, cfg); err == nil {
			break
		}
		if refused(err) {
			// The server is up and turns this login away: waiting longer
			// changes nothing.
			return nil, fmt.Errorf("connect over %s as %s to %s: %s", i.runDir, cfg.User, cfg.Database, pgErrText(err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect over %s: %w", i.runDir, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if i.spec.login != nil {
		// Nothing of the source's to change: its role keeps its password.
		return readSettings(ctx, conn)
	}
	// The password must not reach the server log, even in an error report.
	for _, q := range []string{"SET log_statement = 'none'", "SET log_min_error_statement = 'panic'",
		"ALTER ROLE " + UserName + " PASSWORD '" + i.password.Reveal() + "'"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return nil, errors.New("set the generated password: " + pgErrText(err))
		}
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", DatabaseName).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for database %s: %w", DatabaseName, err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+DatabaseName); err != nil {
			return nil, fmt.Errorf("create database %s: %w", DatabaseName, err)
		}
	}
	return readSettings(ctx, conn)
}

// readSettings reads the settings recorded as the instance's effective
// ones.
func readSettings(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	eff := map[string]string{}
	for _, k := range []string{"server_version", "shared_buffers", "max_connections", "wal_level", "wal_sync_method",
		"backend_flush_after", "checkpoint_flush_after", "fsync", "synchronous_commit", "data_directory",
		"track_io_timing", "track_wal_io_timing"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT coalesce(current_setting($1, true), '')", k).Scan(&v); err != nil {
			return nil, fmt.Errorf("read setting %s: %w", k, err)
		}
		eff[k] = v
	}
	return eff, nil
}

// refused reports an error by which a running server turns a login away
// (SQLSTATE class 28, invalid authorization; 3D000, no such database), as
// opposed to one that is not up yet.
func refused(err error) bool {
	var code interface{ SQLState() string }
	if !errors.As(err, &code) {
		return false
	}
	s := code.SQLState()
	return strings.HasPrefix(s, "28") || s == "3D000"
}

// pgErrText is an error without anything of the statement that caused it.
func pgErrText(err error) string {
	var code interface{ SQLState() string }
	if errors.As(err, &code) {
		return "SQLSTATE " + code.SQLState()
	}
	return "connection failed"
}

func (postgresEngine) scheme() string { return "postgres" }

func (postgresEngine) target(i *Instance) dialect.Target {
	if l := i.spec.login; l != nil {
		// The source's role over the private socket: peer authentication,
		// no password.
		q := url.Values{"host": {i.runDir}, "port": {strconv.Itoa(i.port)}, "sslmode": {"disable"}}
		return dialect.Target{Scheme: "postgres",
			URL: &url.URL{Scheme: "postgres", User: url.User(l.role), Path: "/" + l.database, RawQuery: q.Encode()}}
	}
	return dialect.Target{Scheme: "postgres",
		URL: &url.URL{Scheme: "postgres", User: url.User(UserName), Host: fmt.Sprintf("127.0.0.1:%d", i.port),
			Path: "/" + DatabaseName, RawQuery: "sslmode=disable"},
		Password: i.password, PasswordSet: true}
}
