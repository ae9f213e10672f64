package instance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dialect"
)

// mariadbEngine runs MariaDB: mariadb-install-db once, then mariadbd with
// --no-defaults and every option on its command line. The user oltplab
// connects as gets its generated password from an --init-file the server
// runs before it accepts connections; the file is removed once it is up.
type mariadbEngine struct{}

const mariadbPackage = "mariadb-server"

func (mariadbEngine) server() bool { return true }

// mariadbRefused are the options a spec must not give a managed MariaDB
// (refused.go), by the server's own names: listening, the port and the
// socket; authentication (the grant tables, host names in grants, old
// password hashes, the unix_socket plugin, TLS with its key files, a
// proxy's word for the client's address, bootstrap mode, which runs
// without grants); every option naming a file or directory the server
// reads or writes (the binary log only by path: a name without one stays
// in the data directory); the account it runs as; code it loads (plugins,
// UDFs); and what connects it to other hosts (Galera's wsrep, the
// feedback plugin, which reports to mariadb.org); with the option files
// and what oltplab derives from the spec. TestSettingTablesKnowTheServer
// holds the table against the installed server's options.
var mariadbRefused = []refusal{
	{name: "bind-address", why: whyListening},
	{name: "skip-networking", why: whyListening},
	{name: "port", why: whyPort},
	{name: "extra-port", why: whyPort},
	{name: "socket", why: whySocket},
	{name: "skip-grant-tables", why: whyAuth},
	{name: "skip-name-resolve", why: whyAuth},
	{name: "old-passwords", why: whyAuth},
	{name: "secure-auth", why: whyAuth},
	{name: "unix-socket", why: whyAuth},
	{name: "proxy-protocol-networks", why: whyAuth},
	{name: "require-secure-transport", why: whyAuth},
	{name: "ssl", prefix: true, why: whyAuth}, // ssl, ssl-key, ssl-cert, ...
	{name: "tls-version", why: whyAuth},
	{name: "bootstrap", why: whyAuth},
	{name: "user", why: whyAccount},
	{name: "chroot", why: whyFiles},
	{name: "datadir", why: whyFiles},
	{name: "basedir", why: whyFiles},
	{name: "tmpdir", why: whyFiles},
	{name: "language", why: whyFiles}, // lc-messages-dir's old name
	{name: "lc-messages-dir", why: whyFiles},
	{name: "character-sets-dir", why: whyFiles},
	{name: "pid-file", why: whyFiles},
	{name: "log-error", why: whyFiles},
	{name: "general-log-file", why: whyFiles},
	{name: "slow-query-log-file", why: whyFiles},
	{name: "log-slow-query-file", why: whyFiles},
	{name: "log-bin", why: whyFiles + "; name the binary log without a path", allow: plainName},
	{name: "log-bin-index", why: whyFiles},
	{name: "relay-log", why: whyFiles},
	{name: "relay-log-index", why: whyFiles},
	{name: "relay-log-info-file", why: whyFiles},
	{name: "master-info-file", why: whyFiles},
	{name: "log-basename", why: whyFiles},
	{name: "log-tc", why: whyFiles},
	{name: "log-isam", why: whyFiles},
	{name: "log-ddl-recovery", why: whyFiles},
	{name: "secure-file-priv", why: whyFiles},
	{name: "symbolic-links", why: whyFiles},
	{name: "ft-stopword-file", why: whyFiles},
	{name: "des-key-file", why: whyFiles},
	{name: "debug", why: whyFiles}, // its trace file
	{name: "innodb-data-home-dir", why: whyFiles},
	{name: "innodb-data-file-path", why: whyFiles}, // may name raw devices
	{name: "innodb-temp-data-file-path", why: whyFiles},
	{name: "innodb-undo-directory", why: whyFiles},
	{name: "innodb-tmpdir", why: whyFiles},
	{name: "innodb-buffer-pool-filename", why: whyFiles},
	{name: "aria-log-dir-path", why: whyFiles},
	{name: "slave-load-tmpdir", why: whyFiles},
	{name: "no-defaults", why: whyOptionFiles},
	{name: "defaults-file", why: whyOptionFiles},
	{name: "defaults-extra-file", why: whyOptionFiles},
	{name: "defaults-group-suffix", why: whyOptionFiles},
	{name: "plugin-dir", why: whyCode},
	{name: "plugin-load", why: whyCode},
	{name: "plugin-load-add", why: whyCode},
	{name: "allow-suspicious-udfs", why: whyCode},
	{name: "wsrep", prefix: true, why: whyHosts}, // Galera: cluster ports, provider library, SST scripts
	{name: "feedback", prefix: true, why: whyHosts},
	{name: "init-file", why: "is set by oltplab: it creates oltplab's user with the generated password"},
	{name: "getopt-prefix-matching", why: "is set by oltplab: a managed MariaDB reads whole option names only"},
	{name: "innodb-buffer-pool-size", why: whyMemory},
	{name: "max-connections", why: whyMaxConns},
	{name: "innodb-log-group-home-dir", why: whyWALDir},
}

// whyOptionFiles: a managed MariaDB reads no option file.
const whyOptionFiles = "reads option files: a managed MariaDB takes its options from oltplab's command line only"

// mariadbOptionPrefixes are the forms mariadbd reads an option name in
// besides the name itself (my_getopt's special prefixes, and plugin- for
// a plugin's options): loose-port is port, enable-skip-grant-tables is
// skip-grant-tables.
var mariadbOptionPrefixes = []string{"loose-", "skip-", "disable-", "enable-", "maximum-", "plugin-"}

// mariadbShortOptions are the options of mariadbd that begin a refused
// option's name but are options of their own (log-bin, not log-bin-index).
// Any other beginning of a refused name is refused with it: a server
// with prefix matching on would take bind for bind-address. oltplab starts
// mariadbd with --skip-getopt-prefix-matching, so the server takes whole
// names only; the table names the option a prefix would have meant.
// TestSettingTablesKnowTheServer checks the list against the installed
// server.
var mariadbShortOptions = map[string]bool{
	"general-log": true, "slow-query-log": true, "log-slow-query": true, "log-bin": true, "relay-log": true,
	"plugin-load": true, "innodb": true, "lc-messages": true, "old": true,
}

// mariadbName is an option name as mariadbd reads it (any case, '_' and
// '-' alike).
func mariadbName(k string) string { return strings.ReplaceAll(strings.ToLower(k), "_", "-") }

func (mariadbEngine) settingKey(k string) string { return mariadbName(k) }

// refused finds the refusal of an option in every form mariadbd could
// read it as: the name itself and the name without each of its special
// prefixes, whole or as the beginning of a refused name.
func (mariadbEngine) refused(k, v string) (string, refusal, bool) {
	forms := []string{mariadbName(k)}
	for i := 0; i < len(forms); i++ {
		for _, p := range mariadbOptionPrefixes {
			if rest, ok := strings.CutPrefix(forms[i], p); ok {
				forms = append(forms, rest)
			}
		}
	}
	for _, f := range forms {
		if r, ok := findRefusal(mariadbRefused, f); ok && (r.allow == nil || !r.allow(v)) {
			return f, r, true
		}
	}
	for _, f := range forms {
		if mariadbShortOptions[f] {
			continue
		}
		for _, r := range mariadbRefused {
			if strings.HasPrefix(r.name, f) && r.name != f {
				return r.name, r, true
			}
		}
	}
	return "", refusal{}, false
}

func (mariadbEngine) locate(binDir string) (Binaries, error) {
	dirs := []string{binDir, filepath.Join(binDir, "..", "bin"), filepath.Join(binDir, "..", "scripts")}
	if binDir == "" {
		dirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/mysql/scripts"}
	}
	server, install := "", ""
	for _, d := range dirs {
		if p := filepath.Join(d, "mariadbd"); server == "" && isExecutable(p) {
			server = p
		}
		if p := filepath.Join(d, "mariadb-install-db"); install == "" && isExecutable(p) {
			install = p
		}
	}
	if binDir == "" {
		if server == "" {
			server = findBinary("mariadbd")
		}
		if install == "" {
			install = findBinary("mariadb-install-db")
		}
	}
	if server == "" || install == "" {
		where := "/usr/sbin, /usr/bin or PATH"
		if binDir != "" {
			where = binDir
		}
		return Binaries{}, errorf(KindBinary, "MariaDB server binaries (mariadbd, mariadb-install-db) not found in %s: install the Debian package %s", where, mariadbPackage)
	}
	return Binaries{Dir: filepath.Dir(server), Server: server, Init: install}, nil
}

func (mariadbEngine) osUser() string { return "mysql" }

func (mariadbEngine) initialised(i *Instance) (bool, error) {
	if _, err := os.Stat(filepath.Join(i.engineDir, "mysql")); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return false, errorf(KindDirectory, "data_dir %s: %v", i.engineDir, unwrapPath(err))
		}
		if entries, err := os.ReadDir(i.engineDir); err == nil && len(entries) > 0 {
			return false, errorf(KindDirectory, "data_dir: %s is not empty and holds no MariaDB data directory", i.engineDir)
		}
		return false, nil
	}
	// The redo log must be where the spec says, or InnoDB would not find it.
	logDir := i.engineDir
	if i.engineWALDir != "" {
		logDir = i.engineWALDir
	}
	if _, err := os.Stat(filepath.Join(logDir, "ib_logfile0")); err != nil {
		if i.engineWALDir != "" {
			return false, errorf(KindSpec, "data_dir %s holds a MariaDB whose redo log is not in wal_dir %s", i.engineDir, i.walDir)
		}
		return false, errorf(KindSpec, "data_dir %s holds a MariaDB whose redo log is elsewhere: give its wal_dir", i.engineDir)
	}
	return true, nil
}

func (mariadbEngine) initialise(ctx context.Context, i *Instance) error {
	args := []string{"--no-defaults", "--datadir=" + i.engineDir, "--auth-root-authentication-method=socket",
		"--skip-test-db", "--skip-name-resolve"}
	if i.engineWALDir != "" {
		args = append(args, "--innodb-log-group-home-dir="+i.engineWALDir)
	}
	return i.runTool(ctx, "mariadb-install-db", i.command(i.bins.Init, args...))
}

// mariadbIOSettings keep every InnoDB write the server's own and direct,
// so that a cgroup v1 throttle sees it: data files with O_DIRECT (the
// doublewrite buffer included) and the redo log unbuffered. They are the
// 10.11 defaults, set explicitly so that the record shows them.
var mariadbIOSettings = []setting{
	{"innodb-flush-method", "O_DIRECT"},
	{"innodb-log-file-buffering", "OFF"},
}

// mariadbStartSettings make every start begin with an empty buffer pool,
// as a PostgreSQL start does: MariaDB otherwise saves the hottest quarter
// of the pool's page numbers at shutdown and reads those pages back at
// start, which would make a cold restart (Instance.Restart) warm and
// every start depend on the one before.
var mariadbStartSettings = []setting{
	{"innodb-buffer-pool-dump-at-shutdown", "OFF"},
	{"innodb-buffer-pool-load-at-startup", "OFF"},
}

// mariadbTimingSettings make the server time its own file I/O
// (performance_schema file_summary_by_event_name: reads, writes and the
// rest of InnoDB's data files, with their time) and show each session's
// wait in progress (events_waits_current), which the wait sampler reads.
// performance_schema is off by default in MariaDB, and not free: on
// MariaDB 10.11 with the engine's default sizes it took 98 MB more
// resident memory at start (199 MB against 100 MB); without the event
// histories and digests, which oltplab does not read, 75 MB (175 MB).
// It counts in a memory_limit like the rest of the server; --set
// performance_schema=OFF turns it off.
var mariadbTimingSettings = []setting{
	{"performance-schema", "ON"},
	{"performance-schema-instrument", "wait/io/file/%=ON"},
	{"performance-schema-consumer-events-waits-current", "ON"},
	{"performance-schema-events-waits-history-size", "0"},
	{"performance-schema-events-waits-history-long-size", "0"},
	{"performance-schema-events-stages-history-size", "0"},
	{"performance-schema-events-stages-history-long-size", "0"},
	{"performance-schema-events-statements-history-size", "0"},
	{"performance-schema-events-statements-history-long-size", "0"},
	{"performance-schema-events-transactions-history-size", "0"},
	{"performance-schema-events-transactions-history-long-size", "0"},
	{"performance-schema-digests-size", "0"},
}

func (mariadbEngine) ioLimitNote() string {
	return "InnoDB data with O_DIRECT, redo log unbuffered (innodb_log_file_buffering=OFF)"
}

func (mariadbEngine) memorySetting() string { return "innodb_buffer_pool_size" }

func (mariadbEngine) settings(i *Instance) []setting {
	s := []setting{
		// Whole option names only: no prefix of an option reaches the
		// server as that option (the spec's are checked by mariadbRefused).
		{"skip-getopt-prefix-matching", ""},
		// The feedback plugin, where a build turns it on, would report to
		// mariadb.org; "loose": a build without it starts all the same.
		{"loose-feedback", "OFF"},
		{"datadir", i.engineDir},
		{"port", strconv.Itoa(i.port)},
		{"bind-address", "127.0.0.1"},
		{"socket", filepath.Join(i.runDir, "mysqld.sock")},
		{"pid-file", filepath.Join(i.runDir, "mysqld.pid")},
		{"init-file", filepath.Join(i.runDir, "init.sql")},
		{"skip-name-resolve", ""},
		{"local-infile", "1"},
		{"skip-log-bin", ""},
	}
	if i.engineWALDir != "" {
		s = append(s, setting{"innodb-log-group-home-dir", i.engineWALDir})
	}
	if i.spec.MaxConnections > 0 {
		s = append(s, setting{"max-connections", strconv.Itoa(i.spec.MaxConnections + ConnectionReserve)})
	}
	if i.spec.Memory > 0 {
		s = append(s, setting{"innodb-buffer-pool-size", strconv.FormatInt(i.spec.Memory.Bytes(), 10)})
	}
	s = append(s, mariadbIOSettings...)
	s = append(s, mariadbStartSettings...)
	s = append(s, mariadbTimingSettings...)
	return withSpecSettings(s, i.spec.Settings)
}

func (mariadbEngine) prepare(i *Instance) ([]string, error) {
	pw := i.password.Reveal()
	var b strings.Builder
	for _, host := range []string{"127.0.0.1", "localhost"} {
		acct := fmt.Sprintf("'%s'@'%s'", UserName, host)
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s';\n", acct, pw)
		fmt.Fprintf(&b, "ALTER USER %s IDENTIFIED BY '%s';\n", acct, pw)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON *.* TO %s WITH GRANT OPTION;\n", acct)
	}
	fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS %s;\n", DatabaseName)
	if _, err := i.writePrivate("init.sql", b.String()); err != nil {
		return nil, err
	}
	args := []string{"--no-defaults"}
	for _, s := range i.settings {
		if s.value == "" {
			args = append(args, "--"+mariadbName(s.name)) // a switch
		} else {
			args = append(args, "--"+mariadbName(s.name)+"="+s.value)
		}
	}
	return args, nil
}

// mariadbd shuts down cleanly on SIGTERM; on oltplab's death it is killed
// (InnoDB recovers from its redo log at the next start).
func (mariadbEngine) stopSignal() syscall.Signal  { return syscall.SIGTERM }
func (mariadbEngine) deathSignal() syscall.Signal { return syscall.SIGKILL }

func (mariadbEngine) ready(ctx context.Context, i *Instance) (map[string]string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = UserName, i.password.Reveal()
	cfg.Net, cfg.Addr = "tcp", fmt.Sprintf("127.0.0.1:%d", i.port)
	cfg.DBName = DatabaseName
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for {
		if err = db.PingContext(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to 127.0.0.1:%d: %w", i.port, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// The init file holds the password; the server has read it.
	_ = os.Remove(filepath.Join(i.runDir, "init.sql"))
	eff := map[string]string{}
	for _, k := range []string{"version", "innodb_buffer_pool_size", "max_connections", "innodb_flush_method",
		"innodb_log_file_buffering", "innodb_flush_log_at_trx_commit", "innodb_doublewrite", "datadir", "innodb_log_group_home_dir",
		"innodb_buffer_pool_load_at_startup", "performance_schema"} {
		var v sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT @@"+k).Scan(&v); err != nil {
			return nil, fmt.Errorf("read setting %s: %w", k, err)
		}
		eff[k] = v.String
	}
	return eff, nil
}

func (mariadbEngine) scheme() string { return "mysql" }

func (mariadbEngine) target(i *Instance) dialect.Target {
	return dialect.Target{Scheme: "mysql",
		URL:      &url.URL{Scheme: "mysql", User: url.User(UserName), Host: fmt.Sprintf("127.0.0.1:%d", i.port), Path: "/" + DatabaseName},
		Password: i.password, PasswordSet: true}
}
