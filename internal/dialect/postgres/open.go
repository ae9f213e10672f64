package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
)

func init() { dialect.Register("postgres", Open) }

// Compile-time checks of the abilities this dialect offers.
var (
	_ dialect.Database           = (*Database)(nil)
	_ dialect.TxCounter          = (*Database)(nil)
	_ dialect.ProcedureInstaller = (*Database)(nil)
	_ dialect.DataDirer          = (*Database)(nil)
)

// Database is one PostgreSQL database. Every Connect, NewLoader and
// NewSession opens its own connection from cfg.
type Database struct {
	cfg    *pgx.ConnConfig // password included; never formatted
	target string          // the target without its password, for errors
	// plainSockets: sessions keep their sockets as dialed (dialect.Env).
	plainSockets bool

	// meta is a lazily opened connection for the counters that samplers
	// read every second (TxCount), so they do not fork a backend each time.
	metaMu sync.Mutex
	meta   *pgx.Conn

	// endOthers: hygiene may end this user's other sessions (EndOtherSessions).
	endOthers atomic.Bool
}

// Open parses the target and checks that the database accepts a
// connection. Errors are *dialect.Error with the class of the failure
// (connection, auth, undefined object for a missing database); they never
// carry the password.
func Open(ctx context.Context, t dialect.Target) (dialect.Database, error) {
	d, err := open(ctx, t)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func open(ctx context.Context, t dialect.Target) (*Database, error) {
	target := t.String()
	op := "connect to " + target
	if t.URL == nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: errors.New("no URL in target")}
	}
	if t.URL.Opaque != "" {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("%w: write postgres://USER@HOST:PORT/DB, with two slashes after the scheme", dialect.ErrBadTarget)}
	}
	// t.URL holds no password: pgx's own PGPASSWORD and ~/.pgpass handling
	// applies unless the user gave one.
	cfg, err := pgx.ParseConfig(t.URL.String())
	if err != nil {
		// pgx's error quotes the connection string; keep only its cause.
		msg := "not a valid PostgreSQL URL"
		if inner := errors.Unwrap(err); inner != nil {
			msg += ": " + dialect.Redact(inner.Error())
		}
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: op, Err: fmt.Errorf("%w: %s", dialect.ErrBadTarget, msg)}
	}
	if t.PasswordSet {
		cfg.Password = t.Password.Reveal()
	}
	if cfg.ConnectTimeout == 0 { // connect_timeout in the URL sets it
		cfg.ConnectTimeout = dialect.ConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		// Sessions show up as oltplab's in pg_stat_activity.
		cfg.RuntimeParams["application_name"] = "oltplab"
	}
	d := &Database{cfg: cfg, target: target, plainSockets: t.Env.PlainSockets}
	conn, err := d.connect(ctx)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == stateInvalidCatalogName {
			// pgx's text repeats every address and TLS attempt: say only this.
			return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
				Err: fmt.Errorf("%w: %q does not exist on %s:%d: create it first (CREATE DATABASE %s, or createdb)",
					dialect.ErrNoDatabase, cfg.Database, cfg.Host, cfg.Port, quoteIdent(cfg.Database))}
		}
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.Ping(ctx); err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: op, Err: err}
	}
	return d, nil
}

// connect opens one connection; its error is a *dialect.Error.
func (d *Database) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, d.cfg)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: connectCause(d.cfg, err)}
	}
	return conn, nil
}

// connectCause shortens pgx's connect error to the attempt that matters.
// pgx tries TLS first (sslmode=prefer, the default) and then plain text,
// and reports every attempt; "server refused TLS connection" in front of
// every message hides the real cause. It also reports a server that speaks
// another protocol as "received unexpected message: %!w(<nil>)", and a
// timeout as "context deadline exceeded". The
// returned error keeps err's chain (SQLSTATE, net errors) for Classify.
func connectCause(cfg *pgx.ConnConfig, err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	last := errors.Unwrap(ce)
	if j, ok := last.(interface{ Unwrap() []error }); ok {
		if all := j.Unwrap(); len(all) > 0 {
			last = all[len(all)-1]
		}
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	var msg string
	switch cause := errors.Unwrap(last); {
	case last == nil || cause == nil:
		msg = err.Error()
	case pgconn.Timeout(err):
		msg = fmt.Sprintf("%s: no answer within %s", addr, cfg.ConnectTimeout)
	default:
		// pgx wraps a nil error when the server's first message is not
		// PostgreSQL's: it is some other server.
		const nilCause = ": %!w(<nil>)"
		msg = addr + ": " + cause.Error()
		if trimmed, ok := strings.CutSuffix(msg, nilCause); ok {
			msg = trimmed + " (is a PostgreSQL server listening there?)"
		}
	}
	return &causeError{msg: fmt.Sprintf("user %s, database %s: %s", cfg.User, cfg.Database, msg), err: err}
}

// causeError is an error with a shorter message than the chain it wraps.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// Name is the dialect name recorded with results.
func (d *Database) Name() string { return "postgres" }

// Caps: stored procedures, unlimited load workers, exact NUMERIC money.
// pg_stat_database lags: a backend publishes its transaction counts when
// it goes idle at most once a second (PGSTAT_MIN_INTERVAL).
func (d *Database) Caps() dialect.Capabilities {
	return dialect.Capabilities{Procedures: true, MaxLoadWorkers: 0, MoneyTolerance: 0, TxCountLag: time.Second,
		TxCountsStatements: dialect.StatementsCounted} // every autocommit statement is a transaction in xact_commit
}

// Close closes the metadata connection, if one was opened.
func (d *Database) Close() error {
	d.metaMu.Lock()
	defer d.metaMu.Unlock()
	if d.meta == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.meta.Close(ctx)
	d.meta = nil
	if err != nil {
		return fmt.Errorf("close metadata connection: %w", err)
	}
	return nil
}

// withMeta runs fn on the shared metadata connection, reopening it when it
// was lost.
func (d *Database) withMeta(ctx context.Context, fn func(c *pgx.Conn) error) error {
	d.metaMu.Lock()
	defer d.metaMu.Unlock()
	if d.meta != nil && d.meta.IsClosed() {
		d.meta = nil
	}
	if d.meta == nil {
		c, err := d.connect(ctx)
		if err != nil {
			return err
		}
		d.meta = c
	}
	return fn(d.meta)
}
