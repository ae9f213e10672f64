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
	"os"
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
	// procDB opens the procedure sessions' connections: always a new one,
	// over a raw socket that the session keeps for Interrupt (session.go).
	procDB *sql.DB
	target string // the target without password, for messages
	dbName string

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
// password comes from the target, or from MYSQL_PWD when the target has
// none (as the mysql client does).
func Open(ctx context.Context, t dialect.Target) (dialect.Database, error) {
	cfg, err := config(t)
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
	pcfg := cfg.Clone()
	pcfg.DialFunc = dialProcSession
	pconnector, err := mysql.NewConnector(pcfg)
	if err != nil {
		db.Close()
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	procDB := sql.OpenDB(pconnector)
	// No idle connection: every procedure session dials its own.
	procDB.SetMaxIdleConns(-1)
	d := &DB{db: db, procDB: procDB, target: t.String(), dbName: cfg.DBName}
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
func config(t dialect.Target) (*mysql.Config, error) {
	u := t.URL
	if u == nil {
		return nil, errors.New("target has no URL")
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	if cfg.User == "" {
		cfg.User = os.Getenv("USER")
	}
	if cfg.User == "" {
		cfg.User = "root"
	}
	if t.PasswordSet {
		cfg.Passwd = t.Password.Reveal()
	} else {
		cfg.Passwd = os.Getenv("MYSQL_PWD")
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
	cfg.Logger = driverLogger{}
	// Pin a collation safe for InterpolateParams and common to MariaDB and MySQL 8.
	cfg.Collation = "utf8mb4_general_ci"
	// LOAD DATA LOCAL INFILE reads only readers this package registers
	// (load.go), never files: AllowAllFiles stays false.
	cfg.AllowAllFiles = false
	return cfg, nil
}

// driverLogger routes the driver's own diagnostics to slog.
type driverLogger struct{}

func (driverLogger) Print(v ...any) {
	slog.Default().Debug("mysql driver", "msg", strings.TrimSpace(fmt.Sprint(v...)))
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
func (d *DB) Close() error { return errors.Join(d.db.Close(), d.procDB.Close()) }

// Connect opens a plain connection.
func (d *DB) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("connect to "+d.target, err)
	}
	return &conn{c: c}, nil
}
