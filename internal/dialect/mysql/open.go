// Package mysql is oltplab's MariaDB / MySQL dialect, on
// github.com/go-sql-driver/mysql through database/sql. It owns the InnoDB
// DDL, the bulk loader (LOAD DATA LOCAL INFILE from in-memory streams, with
// a multi-row INSERT fallback), the stored procedures (procedures.sql), the
// client-side session adapter, the error classifier (server error numbers),
// and the server's own counters, version and settings.
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
	"errors"
	"fmt"
	"log/slog"
	"net"
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
	// sessDB opens the sessions' connections: always a new one, over a raw
	// socket (package rawconn; a plain one with Env.PlainSockets) that a
	// procedure session keeps for Interrupt (session.go).
	sessDB *sql.DB
	target string // the target without password, for messages
	dbName string
	log    *slog.Logger

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
	cfg, err := config(t, log)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		// NewConnector only normalises cfg; its errors never quote the password.
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	db := sql.OpenDB(connector)
	// Sessions hold their connection for the whole run; the pool only has to
	// keep a few administrative connections.
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	scfg := cfg.Clone()
	scfg.DialFunc = sessionDialer(!t.Env.PlainSockets, cfg.Timeout)
	sconnector, err := mysql.NewConnector(scfg)
	if err != nil {
		db.Close()
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	sessDB := sql.OpenDB(sconnector)
	// No idle connection: every session dials its own.
	sessDB.SetMaxIdleConns(-1)
	d := &DB{db: db, sessDB: sessDB, target: t.String(), dbName: cfg.DBName,
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

// config builds the driver configuration for t. The password goes into the
// returned config only; nothing formats that config into text.
func config(t dialect.Target, log *slog.Logger) (*mysql.Config, error) {
	u := t.URL
	if u == nil {
		return nil, errors.New("target has no URL")
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
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Administrative statements with arguments (Querier, Snapshot) go out as
	// one text query instead of prepare/execute/close: one round trip, not
	// three. Sessions prepare their statements explicitly (session.go), so
	// this does not apply to them.
	cfg.InterpolateParams = true
	cfg.Timeout = 30 * time.Second
	cfg.Logger = driverLogger{log}
	// Pin a collation safe for InterpolateParams and common to MariaDB and MySQL 8.
	cfg.Collation = "utf8mb4_general_ci"
	// LOAD DATA LOCAL INFILE reads only readers this package registers
	// (load.go), never files: AllowAllFiles stays false.
	cfg.AllowAllFiles = false
	return cfg, nil
}

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
	return dialect.Capabilities{Procedures: true, MoneyTolerance: 0}
}

// Close closes every pooled connection.
func (d *DB) Close() error { return errors.Join(d.db.Close(), d.sessDB.Close()) }

// Connect opens a plain connection.
func (d *DB) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("connect to "+d.target, err)
	}
	return &conn{c: c}, nil
}
