// Package mysql is oltplab's MariaDB / MySQL dialect, on
// github.com/go-sql-driver/mysql: through database/sql for administration,
// loading and checks, through the driver's own interfaces for the sessions
// (sessconn.go). It owns the InnoDB DDL, the bulk loader (LOAD DATA LOCAL
// INFILE from in-memory streams, with a multi-row INSERT fallback), the
// stored procedures (procedures.sql), the client-side session adapter,
// which sends several statements in one query (clientsql.go,
// interpolate.go), the error classifier (server error numbers), the
// server's own counters, version and settings, and the TPC-H tables,
// loader and query sessions (tpch.go).
//
// Everything that differs between MariaDB 10.x and MySQL 8 is data in this
// package (error numbers, variable names); the SQL itself is the common
// subset of both.
//
// It must not import internal/driver, internal/load, internal/store,
// internal/cli or another dialect package.
package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dialect"
)

func init() { dialect.Register("mysql", Open) }

// defaultDatabase is used when the target URL names no database (HammerDB's
// default schema name).
const defaultDatabase = "tpcc"

// DB is one MariaDB or MySQL database opened from a target.
type DB struct {
	db *sql.DB
	// sessions opens the sessions' connections (sessConn): over a raw
	// socket (package rawconn; a plain one with Env.PlainSockets) that a
	// session keeps for Interrupt, with several statements allowed in one
	// query (clientsql.go).
	sessions driver.Connector
	target   string // the target without password, for messages
	dbName   string
	log      *slog.Logger

	// Variants that tests and benchmarks measure against the defaults
	// (set from export_test.go; nothing else sets them):
	//
	// forceLoadMode, when not nil, overrides the load mode probe.
	forceLoadMode *loadMode
	// primaryKeysAfterLoad adds the primary keys after the load instead
	// of creating them with the tables (InnoDB clusters rows on them; the
	// generator emits every table in key order). Measured with
	// BenchmarkBuildVariants, 10 warehouses, 2 loaders, MariaDB 10.11 on 2
	// cores: keys with the tables 46 s (load 45.7 s, indexes 0.7 s) against
	// 78 s after the load (load 36.4 s, keys and indexes 40.9 s).
	primaryKeysAfterLoad bool
	// callText sends CALLs as text with the arguments interpolated by the
	// driver instead of executing the prepared statements. Both are one
	// round trip; BenchmarkCallText measured the prepared CALL a little
	// cheaper in client CPU (mix: 93 against 101 us per transaction), and
	// it spares the server a parse, so it is the default.
	callText bool

	// loadMode is decided once, by the first loader: LOAD DATA LOCAL INFILE,
	// or multi-row INSERT when the server refuses LOCAL INFILE.
	loadOnce sync.Once
	loadMode loadMode
	loadErr  error
}

var (
	_ dialect.Database           = (*DB)(nil)
	_ dialect.TxCounter          = (*DB)(nil)
	_ dialect.ProcedureInstaller = (*DB)(nil)
)

// Open opens the database t names and verifies that it can connect. The
// password comes from the target, or from MYSQL_PWD in t.Env when the
// target has none (as the mysql client does).
func Open(ctx context.Context, t dialect.Target) (dialect.Database, error) {
	log := t.Env.Log()
	cfg, timeout, err := config(t, log)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		// NewConnector only normalises cfg; its errors never quote the password.
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: fmt.Errorf("%w: %w", dialect.ErrBadTarget, err)}
	}
	db := sql.OpenDB(boundedConnector{connector, cfg.Addr, timeout})
	// Sessions hold their connection for the whole run; the pool only has to
	// keep a few administrative connections.
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	scfg := cfg.Clone()
	scfg.DialFunc = sessionDialer(!t.Env.PlainSockets, cfg.Timeout)
	scfg.MultiStatements = true
	sconnector, err := mysql.NewConnector(scfg)
	if err != nil {
		db.Close()
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	d := &DB{db: db, sessions: boundedConnector{sconnector, cfg.Addr, timeout}, target: t.String(), dbName: cfg.DBName,
		log: log}
	if err := db.PingContext(ctx); err != nil {
		d.Close()
		if errno(err) == errBadDB {
			return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: "connect to " + d.target,
				Err: fmt.Errorf("%w: %q does not exist on %s: create it first (CREATE DATABASE %s)",
					dialect.ErrNoDatabase, cfg.DBName, cfg.Addr, quoteIdent(cfg.DBName))}
		}
		return nil, d.wrap("connect to "+d.target, err)
	}
	return d, nil
}

// errBadDB is ER_BAD_DB_ERROR: unknown database.
const errBadDB = 1049

// params are the target parameters this dialect understands; any other is
// refused rather than silently ignored.
var params = map[string]string{
	"socket":                  "Unix socket path instead of HOST:PORT",
	"tls":                     "true, false, skip-verify or preferred",
	"connect_timeout":         "seconds to wait for a connection (default 10)",
	"allowCleartextPasswords": "true or 1: allow the mysql_clear_password plugin (over TLS only!)",
}

// config builds the driver configuration for t and the bound on each
// connection attempt. The password goes into the returned config only;
// nothing formats that config into text.
func config(t dialect.Target, log *slog.Logger) (*mysql.Config, time.Duration, error) {
	u := t.URL
	if u == nil {
		return nil, 0, errors.New("target has no URL")
	}
	if u.Opaque != "" {
		return nil, 0, fmt.Errorf("%w: write mysql://USER@HOST:PORT/DB, with two slashes after the scheme", dialect.ErrBadTarget)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	if cfg.User == "" {
		cfg.User = t.Env.Lookup("USER")
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if t.PasswordSet {
		cfg.Passwd = t.Password.Reveal()
	} else {
		cfg.Passwd = t.Env.Lookup("MYSQL_PWD")
	}
	q := u.Query()
	for k := range q {
		if _, ok := params[k]; !ok {
			known := make([]string, 0, len(params))
			for p := range params {
				known = append(known, p)
			}
			sort.Strings(known)
			return nil, 0, fmt.Errorf("%w: unknown parameter %.40q (known: %s)", dialect.ErrBadTarget, k, strings.Join(known, ", "))
		}
	}
	if sock := q.Get("socket"); sock != "" {
		cfg.Net, cfg.Addr = "unix", sock
	} else {
		cfg.Net = "tcp"
		host := u.Hostname()
		if host == "" {
			host = "127.0.0.1"
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Addr = net.JoinHostPort(host, port)
	}
	cfg.DBName = strings.Trim(u.Path, "/")
	if cfg.DBName == "" {
		cfg.DBName = defaultDatabase
	}
	if v := q.Get("tls"); v != "" {
		cfg.TLSConfig = v
	}
	if v := q.Get("allowCleartextPasswords"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: allowCleartextPasswords=%.40q is not true or false", dialect.ErrBadTarget, v)
		}
		cfg.AllowCleartextPasswords = b
	}
	timeout := dialect.ConnectTimeout
	if v := q.Get("connect_timeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, 0, fmt.Errorf("%w: connect_timeout=%.40q is not a number of seconds", dialect.ErrBadTarget, v)
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Administrative statements with arguments (Querier, Snapshot) go out as
	// one text query instead of prepare/execute/close: one round trip, not
	// three. Sessions prepare their statements explicitly (session.go), so
	// this does not apply to them.
	cfg.InterpolateParams = true
	cfg.Timeout = timeout
	cfg.Logger = driverLogger{log}
	// Sessions show up as oltplab's in performance_schema.session_connect_attrs.
	cfg.ConnectionAttributes = "program_name:oltplab"
	// Pin a collation safe for InterpolateParams and common to MariaDB and MySQL 8.
	cfg.Collation = "utf8mb4_general_ci"
	// LOAD DATA LOCAL INFILE reads only readers this package registers
	// (load.go), never files: AllowAllFiles stays false.
	cfg.AllowAllFiles = false
	return cfg, timeout, nil
}

// boundedConnector bounds each connection attempt, handshake included:
// the driver's own Timeout covers only the TCP connect, so a port that
// accepts and never answers (or answers in another protocol that waits
// for the client to speak first) would hang forever.
type boundedConnector struct {
	driver.Connector
	addr    string
	timeout time.Duration
}

func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	tctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.Connector.Connect(tctx)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return nil, handshakeTimeout{addr: c.addr, after: c.timeout}
	}
	return conn, err
}

// handshakeTimeout: no MySQL handshake within the bound. It is a
// net.Error, so Classify sees a connection failure.
type handshakeTimeout struct {
	addr  string
	after time.Duration
}

func (e handshakeTimeout) Error() string {
	return fmt.Sprintf("no MySQL handshake from %s within %s (is a MySQL or MariaDB server listening there?)", e.addr, e.after)
}
func (handshakeTimeout) Timeout() bool   { return true }
func (handshakeTimeout) Temporary() bool { return false }

// driverLogger routes the driver's own diagnostics to the logger of the
// target's dialect.Env.
type driverLogger struct{ log *slog.Logger }

func (l driverLogger) Print(v ...any) {
	l.log.Debug("mysql driver", "msg", strings.TrimSpace(fmt.Sprint(v...)))
}

// wrap returns err as a classified *dialect.Error saying what was being done.
func (d *DB) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &dialect.Error{Class: d.Classify(err), Op: op, Err: err}
}

// Name is "mysql" for MariaDB and MySQL alike; Version tells them apart.
func (d *DB) Name() string { return "mysql" }

// Caps: stored procedures, exact DECIMAL money, no limit on loaders.
func (d *DB) Caps() dialect.Capabilities {
	// Com_commit and Com_rollback count COMMIT and ROLLBACK statements:
	// the samplers' reads in autocommit add nothing to them.
	return dialect.Capabilities{Procedures: true, MoneyTolerance: 0, TxCountsStatements: dialect.StatementsNotCounted}
}

// Close closes every pooled connection.
func (d *DB) Close() error { return d.db.Close() }

// Connect opens a plain connection.
func (d *DB) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("connect to "+d.target, err)
	}
	return &conn{c: c}, nil
}
