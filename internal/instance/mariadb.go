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

var mariadbManaged = map[string]bool{
	"port": true, "bind-address": true, "socket": true, "pid-file": true, "datadir": true, "init-file": true,
	"user": true, "innodb-buffer-pool-size": true, "max-connections": true, "innodb-log-group-home-dir": true,
	"skip-networking": true, "defaults-file": true, "defaults-extra-file": true, "no-defaults": true,
}

// mariadbName is an option name as mariadbd reads it ('_' and '-' alike).
func mariadbName(k string) string { return strings.ReplaceAll(strings.ToLower(k), "_", "-") }

func (mariadbEngine) managed(k string) bool { return mariadbManaged[mariadbName(k)] }

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
