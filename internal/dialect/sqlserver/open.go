package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/rawconn"
)

func init() { dialect.Register("sqlserver", Open) }

// defaultDatabase is used when the target names none (HammerDB's default
// schema name, as in the other dialects).
const defaultDatabase = "tpcc"

// defaultPort is SQL Server's TCP port.
const defaultPort = "1433"

// Environment variables the dialect reads through dialect.Env, as sqlcmd
// does: the password when the target has none, and the user.
const (
	envPassword = "SQLCMDPASSWORD"
	envUser     = "SQLCMDUSER"
)

// DB is one SQL Server database opened from a target. Open returns it
// wrapped in the type of what its server offers (abilities.go).
type DB struct {
	db *sql.DB
	// sessions opens the virtual users' connections: never pooled (a
	// session's connection is its own until it closes), dialed through
	// dialer, which hands the socket to the session for Interrupt.
	sessions *sql.DB
	// connector opens connections outside either pool (loaders).
	connector driver.Connector
	target    string         // without the password, for messages
	tg        dialect.Target // as opened, for scratch databases' targets
	dbName    string
	log       *slog.Logger
	srv       server // what Open found the server to offer (server.go)
}

var (
	_ dialect.Database           = (*DB)(nil)
	_ dialect.ProcedureInstaller = (*DB)(nil)
	_ dialect.CPUCalibrator      = (*DB)(nil)
	_ dialect.AbsenceReporter    = (*DB)(nil)
)

// params are the target parameters this dialect understands (keys compared
// without case, as go-mssqldb does); any other is refused rather than
// silently ignored.
var params = map[string]string{
	"database":               "the database (default " + defaultDatabase + ")",
	"encrypt":                "disable, false, true or strict (TLS for the whole connection; false: the login only)",
	"trustservercertificate": "true: accept the server's certificate without checking it",
	"hostnameincertificate":  "the name the server's certificate holds, when not the host",
	"certificate":            "a file holding the CA certificate that signed the server's",
	"connect_timeout":        "seconds to wait for a connection (default 10)",
}

// Open opens the database t names and checks that it accepts a login. The
// password comes from the target, else from SQLCMDPASSWORD in t.Env (as
// sqlcmd takes it). Errors are *dialect.Error and never carry the password.
func Open(ctx context.Context, t dialect.Target) (dialect.Database, error) {
	d, err := open(ctx, t)
	if err != nil {
		return nil, err
	}
	return d.withAbilities(), nil
}

func open(ctx context.Context, t dialect.Target) (*DB, error) {
	log := t.Env.Log()
	cfg, timeout, err := config(t)
	if err != nil {
		return nil, &dialect.Error{Class: dialect.ClassOther, Op: "open " + t.String(), Err: err}
	}
	cfg.AppName = "oltplab"
	admin := mssql.NewConnectorConfig(cfg)
	admin.Dialer = dialer{timeout: timeout}
	d := &DB{target: t.String(), tg: t, dbName: cfg.Database, log: log}
	d.connector = boundedConnector{admin, hostPort(cfg), timeout}
	d.db = sql.OpenDB(d.connector)
	// Sessions hold their own connections; the pool only has to keep a few
	// administrative ones.
	d.db.SetMaxIdleConns(4)
	d.db.SetConnMaxIdleTime(5 * time.Minute)
	sess := mssql.NewConnectorConfig(cfg)
	sess.Dialer = dialer{timeout: timeout, raw: !t.Env.PlainSockets, session: true}
	d.sessions = sql.OpenDB(boundedConnector{sess, hostPort(cfg), timeout})
	d.sessions.SetMaxIdleConns(0)

	if err := d.db.PingContext(ctx); err != nil {
		d.Close()
		op := "connect to " + d.target
		switch serverErrno(err) {
		case errnoCannotOpenDatabase, errnoNoSuchDatabase:
			return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
				Err: fmt.Errorf("%w: %q does not exist on %s, or this login may not open it: create it first "+
					"(CREATE DATABASE %s)", dialect.ErrNoDatabase, cfg.Database, hostPort(cfg), quoteName(cfg.Database))}
		}
		return nil, d.wrap(op, err)
	}
	if err := d.probe(ctx); err != nil {
		d.Close()
		return nil, d.wrap("find what "+d.target+" offers", err)
	}
	for _, a := range d.srv.absent {
		log.Debug("sqlserver: "+a.String(), "target", d.target)
	}
	return d, nil
}

// config builds the driver configuration for t and the bound on each
// connection attempt. The password goes into the returned config only;
// nothing formats that config into text.
func config(t dialect.Target) (msdsn.Config, time.Duration, error) {
	var none msdsn.Config
	u := t.URL
	if u == nil {
		return none, 0, errors.New("target has no URL")
	}
	if u.Opaque != "" {
		return none, 0, fmt.Errorf("%w: write sqlserver://USER@HOST:PORT?database=DB, with two slashes after the scheme", dialect.ErrBadTarget)
	}
	user := u.User.Username()
	if user == "" {
		user = t.Env.Lookup(envUser)
	}
	if user == "" {
		return none, 0, fmt.Errorf("%w: no user: write sqlserver://USER@HOST:PORT?database=DB (or set %s); "+
			"oltplab logs in with SQL Server authentication", dialect.ErrBadTarget, envUser)
	}
	q := url.Values{}
	timeout := dialect.ConnectTimeout
	for k, vs := range u.Query() {
		key := strings.ToLower(k)
		if _, ok := params[key]; !ok {
			known := make([]string, 0, len(params))
			for p := range params {
				known = append(known, p)
			}
			sort.Strings(known)
			return none, 0, fmt.Errorf("%w: unknown parameter %.40q (known: %s)", dialect.ErrBadTarget, k, strings.Join(known, ", "))
		}
		if len(vs) != 1 {
			return none, 0, fmt.Errorf("%w: parameter %s given %d times: give it once", dialect.ErrBadTarget, key, len(vs))
		}
		v := vs[0]
		switch key {
		case "connect_timeout":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return none, 0, fmt.Errorf("%w: connect_timeout=%.40q is not a number of seconds", dialect.ErrBadTarget, v)
			}
			if n > 0 {
				timeout = time.Duration(n) * time.Second
			}
			continue
		case "encrypt":
			switch strings.ToLower(v) {
			case "disable", "false", "true", "strict", "mandatory", "optional", "no", "yes":
			default:
				return none, 0, fmt.Errorf("%w: encrypt=%.40q: want disable, false, true or strict", dialect.ErrBadTarget, v)
			}
		case "trustservercertificate":
			if _, err := strconv.ParseBool(v); err != nil {
				return none, 0, fmt.Errorf("%w: trustServerCertificate=%.40q is not true or false", dialect.ErrBadTarget, v)
			}
		}
		q.Set(key, v)
	}
	if q.Get("database") == "" {
		q.Set("database", defaultDatabase)
	}
	host := u.Hostname()
	if host == "" {
		host = "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	// The DSN is built without the password: msdsn.Parse's errors may
	// quote it.
	dsn := url.URL{Scheme: "sqlserver", User: url.User(user), Host: net.JoinHostPort(host, port),
		Path: u.Path, RawQuery: q.Encode()}
	cfg, err := msdsn.Parse(dsn.String())
	if err != nil {
		return none, 0, fmt.Errorf("%w: %s", dialect.ErrBadTarget, dialect.Redact(err.Error()))
	}
	if t.PasswordSet {
		cfg.Password = t.Password.Reveal()
	} else {
		cfg.Password = t.Env.Lookup(envPassword)
	}
	cfg.DialTimeout = timeout
	return cfg, timeout, nil
}

// hostPort is where cfg connects, for messages.
func hostPort(cfg msdsn.Config) string {
	return net.JoinHostPort(cfg.Host, strconv.FormatUint(cfg.Port, 10))
}

// dialer dials the server's TCP port within the connect timeout and puts
// the same bound on the login that follows as a deadline on the socket
// (go-mssqldb's login does not watch the context), which
// boundedConnector lifts once the login is done. A session's socket makes
// its reads and writes raw system calls where the platform allows
// (package rawconn) and is handed to the session that asked for it
// through the context (sessionSocket), for Interrupt.
type dialer struct {
	timeout time.Duration
	raw     bool
	session bool
}

// Context keys: the socket a connection attempt dialed (dialedSocket, for
// boundedConnector), and the one a session asks for (sessionSocket).
type (
	dialedSocket  struct{}
	sessionSocket struct{}
)

func (d dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 30 * time.Second}
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if d.session && d.raw {
		c = rawconn.Wrap(c)
	}
	if err := c.SetDeadline(time.Now().Add(d.timeout)); err != nil {
		c.Close()
		return nil, err
	}
	if p, ok := ctx.Value(dialedSocket{}).(*net.Conn); ok {
		*p = c
	}
	if p, ok := ctx.Value(sessionSocket{}).(*net.Conn); ok && d.session {
		*p = c
	}
	return c, nil
}

// boundedConnector bounds each connection attempt, login included, so that
// a port that accepts and never answers, or answers in another protocol,
// fails with a connection error instead of hanging; once the login is
// done the socket's deadline is lifted.
type boundedConnector struct {
	driver.Connector
	addr    string
	timeout time.Duration
}

func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	tctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var nc net.Conn
	conn, err := c.Connector.Connect(context.WithValue(tctx, dialedSocket{}, &nc))
	if err != nil {
		var ne net.Error
		if ctx.Err() == nil && (errors.Is(tctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
			return nil, loginTimeout{addr: c.addr, after: c.timeout}
		}
		return nil, err
	}
	if nc != nil {
		if err := nc.SetDeadline(time.Time{}); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// loginTimeout: no TDS login within the bound. It is a net.Error, so
// Classify sees a connection failure.
type loginTimeout struct {
	addr  string
	after time.Duration
}

func (e loginTimeout) Error() string {
	return fmt.Sprintf("no TDS login from %s within %s (is SQL Server listening there?)", e.addr, e.after)
}
func (loginTimeout) Timeout() bool   { return true }
func (loginTimeout) Temporary() bool { return false }

var _ net.Error = loginTimeout{}

// wrap returns err as a classified *dialect.Error saying what was being done.
func (d *DB) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &dialect.Error{Class: classify(err), Op: op, Err: err}
}

// Name is "sqlserver" for SQL Server and Babelfish alike; Version tells
// them apart.
func (d *DB) Name() string { return "sqlserver" }

// Caps: stored procedures, exact MONEY, no limit on loaders. The
// transaction counter (counters.go) is read from a view the server
// refreshes as transactions end.
func (d *DB) Caps() dialect.Capabilities {
	return dialect.Capabilities{Procedures: true, MoneyTolerance: 0, TxCountLag: time.Second}
}

// Absences lists what Open found the server to lack (server.go).
func (d *DB) Absences() []dialect.Absence { return append([]dialect.Absence(nil), d.srv.absent...) }

// Close closes every pooled connection.
func (d *DB) Close() error {
	err := d.db.Close()
	if serr := d.sessions.Close(); err == nil {
		err = serr
	}
	return err
}

// Connect opens a plain connection.
func (d *DB) Connect(ctx context.Context) (dialect.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("connect to "+d.target, err)
	}
	return &conn{c: c}, nil
}

// quoteName quotes an identifier as T-SQL's QUOTENAME does.
func quoteName(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }
