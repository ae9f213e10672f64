package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/oltplab/oltplab/internal/placeholder"
)

// postgresBackend is a store in a PostgreSQL database that many oltplab
// processes, on many hosts, write to at once: the same tables, columns,
// indexes and migration versions as a SQLite store, in the schema the
// connection's search_path selects (public unless the URL says
// ?search_path=NAME). What SQLite does its own way, PostgreSQL does so:
//
//   - a store is marked as oltplab's by a comment on its schema_migrations
//     table (SQLite: the file's application id), and a schema holding
//     other tables is refused;
//   - creation and migration are serialized by a transaction-level
//     advisory lock in the migration's one transaction (SQLite: a lock on
//     the directory), and PostgreSQL's DDL is transactional, so a store
//     several processes create at once is created once, whole;
//   - there is no integrity check to run: the server keeps its own data
//     sound (WAL, optional page checksums) and reports damaged data as
//     SQLSTATE XX001/XX002, which reads as ErrDamaged; a value damaged
//     inside a row is still refused where it is read;
//   - rows a write transaction reads before changing them are locked
//     (SELECT ... FOR UPDATE), where SQLite's writer holds the whole file;
//   - lock_timeout bounds a writer's wait for a lock as busy_timeout does;
//   - a finished run that cannot be stored because the server is
//     unreachable or the connection was lost (ErrUnavailable) is retried
//     like a busy SQLite store (CompleteDurably), and meanwhile saved to a
//     file in oltplab's data directory.
//
// The password of the URL (or PGPASSWORD, or ~/.pgpass, which pgx reads
// itself) is used to connect and nowhere else: Path shows the URL without
// it, and errors never quote it.
type postgresBackend struct {
	shown    string // the URL without its password
	database string
	secrets  []string // the URL's passwords, taken out of any error text
}

var _ backend = postgresBackend{}

// IsPostgresURL reports whether a results location names a PostgreSQL
// database rather than a SQLite file.
func IsPostgresURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// storeComment marks schema_migrations as the table of an oltplab store.
const storeComment = "oltplab results store"

// migrationLockKey is the advisory lock (pg_advisory_xact_lock) that
// serializes creating and migrating stores in one database; the SQLite
// application id, as a number.
const migrationLockKey = applicationID

// postgresConnectTimeout bounds a connection attempt unless the URL sets
// connect_timeout.
const postgresConnectTimeout = 10 * time.Second

// openPostgres connects to the database raw names. Nothing is created
// here: migrate does that under the advisory lock.
func openPostgres(ctx context.Context, raw string, busy time.Duration) (backend, *sql.DB, func(), error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the URL, password included: keep its cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, nil, fmt.Errorf("open results store: not a valid PostgreSQL URL (%v): %w", redactSecrets(err.Error(), nil), ErrNotStore)
	}
	b := postgresBackend{shown: redactURL(u), database: strings.TrimPrefix(u.Path, "/")}
	if p, ok := u.User.Password(); ok && p != "" {
		b.secrets = append(b.secrets, p)
	}
	for k, vs := range u.Query() {
		if secretParams[strings.ToLower(k)] {
			b.secrets = append(b.secrets, vs...)
		}
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		msg := "not a valid PostgreSQL URL"
		if inner := errors.Unwrap(err); inner != nil {
			msg += ": " + inner.Error()
		}
		return nil, nil, nil, fmt.Errorf("open results store %s: %s: %w", b.shown, redactSecrets(msg, b.secrets), ErrNotStore)
	}
	if cfg.Password != "" {
		b.secrets = append(b.secrets, cfg.Password) // from PGPASSWORD or ~/.pgpass too
	}
	if b.database == "" {
		b.database = cfg.Database
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = postgresConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "oltplab results"
	}
	if _, ok := cfg.RuntimeParams["lock_timeout"]; !ok {
		cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(busy.Milliseconds(), 10)
	}
	pool := stdlib.OpenDB(*cfg)
	// A few connections: one process's writers (a run and its sampler)
	// need no more, and a server shared by a team has connections to spare.
	pool.SetMaxOpenConns(4)
	pool.SetMaxIdleConns(2)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, nil, nil, fmt.Errorf("open results store %s: %w", b.shown, b.classify(b.connectError(cfg, err)))
	}
	return b, pool, func() {}, nil
}

// redactURL is u without the password of its user information and
// without password parameters: what may be shown and compared.
func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	q := c.Query()
	for k := range q {
		if secretParams[strings.ToLower(k)] {
			q.Del(k)
		}
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// connectError shortens pgx's connect error (every address and TLS
// attempt) to its last cause, keeping the chain for classify.
func (b postgresBackend) connectError(cfg *pgx.ConnConfig, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
		if pe.Code == "3D000" {
			msg += fmt.Sprintf("; create it first (createdb %s)", cfg.Database)
		}
		return &scrubbedError{msg: redactSecrets(msg, b.secrets), err: err}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		cause := errors.Unwrap(ce)
		if j, ok := cause.(interface{ Unwrap() []error }); ok {
			if all := j.Unwrap(); len(all) > 0 {
				cause = all[len(all)-1]
			}
		}
		var msg string
		switch inner := errors.Unwrap(cause); {
		case pgconn.Timeout(err):
			msg = fmt.Sprintf("%s:%d: no answer within %s", cfg.Host, cfg.Port, cfg.ConnectTimeout)
		case inner != nil: // "dial tcp HOST:PORT: connect: connection refused"
			msg = inner.Error()
		case cause != nil:
			msg = cause.Error()
		default:
			msg = err.Error()
		}
		return &scrubbedError{msg: redactSecrets(msg, b.secrets), err: err}
	}
	return &scrubbedError{msg: redactSecrets(err.Error(), b.secrets), err: err}
}

// scrubbedError is an error whose text was cleared of passwords; the
// chain it wraps (SQLSTATE, net errors) is kept for classification.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// userinfoPassword is "user:password@" in a URL.
var userinfoPassword = regexp.MustCompile(`(//[^/?#@\s:]*:)[^\s@]*@`)

// redactSecrets removes the known passwords from s, and any password a
// URL in s carries by its structure.
func redactSecrets(s string, secrets []string) string {
	for _, p := range secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "REDACTED")
		}
	}
	return userinfoPassword.ReplaceAllString(s, "${1}REDACTED@")
}

func (b postgresBackend) location() string { return b.shown }

// postgresTypes are SQLite's type words in the migrations as PostgreSQL
// writes them: 64-bit integers (SQLite's INTEGER is 64-bit), bytea for
// the histograms, double precision for the samples (PostgreSQL's REAL is
// 32-bit); the id columns (SQLite's rowid) become identity columns.
var (
	postgresIDColumn = regexp.MustCompile(`\bid(\s+)INTEGER PRIMARY KEY`)
	postgresTypes    = strings.NewReplacer(
		"INTEGER", "BIGINT",
		"BLOB", "BYTEA",
		"REAL", "DOUBLE PRECISION",
		" WITHOUT ROWID", "",
	)
)

func (postgresBackend) ddl(stmt string) string {
	return postgresTypes.Replace(postgresIDColumn.ReplaceAllString(stmt, "id${1}BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"))
}

func (postgresBackend) rebind(q string) string { return placeholder.Dollar(q) }

func (postgresBackend) forUpdate() string { return " FOR UPDATE" }

func (postgresBackend) setWait(d time.Duration) string {
	return fmt.Sprintf("SET lock_timeout = %d", max(d.Milliseconds(), 1))
}

func (postgresBackend) checkVersion(ctx context.Context, q queryer) (int, error) {
	var schema sql.NullString
	if err := q.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return 0, fmt.Errorf("read the current schema: %w", err)
	}
	if !schema.Valid {
		return 0, fmt.Errorf("%w: no schema of the search_path exists to hold it (create one, or name one with ?search_path=NAME)", ErrUnwritable)
	}
	var (
		hasMigrations, otherTables int
		comment                    string
	)
	if err := q.QueryRowContext(ctx, `SELECT
			count(*) FILTER (WHERE c.relname = 'schema_migrations'),
			count(*) FILTER (WHERE c.relname <> 'schema_migrations'),
			COALESCE(max(obj_description(c.oid, 'pg_class')) FILTER (WHERE c.relname = 'schema_migrations'), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`).
		Scan(&hasMigrations, &otherTables, &comment); err != nil {
		return 0, fmt.Errorf("list tables: %w", err)
	}
	switch {
	case hasMigrations > 0 && comment != storeComment:
		return 0, fmt.Errorf("%w: schema %s has a schema_migrations table of another program", ErrNotStore, schema.String)
	case hasMigrations == 0 && otherTables > 0:
		return 0, fmt.Errorf("%w: schema %s holds other tables; give the store a database of its own, or a schema (?search_path=NAME)",
			ErrNotStore, schema.String)
	case hasMigrations == 0:
		return 0, nil
	}
	return storedVersion(ctx, q)
}

// checkIntegrity: PostgreSQL keeps its own data sound and reports damage
// where it reads it (classify: XX001, XX002).
func (postgresBackend) checkIntegrity(context.Context, *dbConn) error { return nil }

func (postgresBackend) prepare(context.Context, *dbConn) error { return nil }

// lockMigration takes the advisory lock that serializes creation and
// migration, waiting up to openLockTimeout for another opener; it is
// released when the migration transaction ends.
func (postgresBackend) lockMigration(ctx context.Context, t *dbTx) error {
	if _, err := t.ExecContext(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, openLockTimeout.Milliseconds())); err != nil {
		return fmt.Errorf("lock the store for migration: %w", err)
	}
	if _, err := t.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(migrationLockKey)); err != nil {
		return fmt.Errorf("lock the store for migration: %w", err)
	}
	return nil
}

func (postgresBackend) markStore(ctx context.Context, t *dbTx) error {
	if _, err := t.ExecContext(ctx, `COMMENT ON TABLE schema_migrations IS '`+storeComment+`'`); err != nil {
		return fmt.Errorf("mark the schema as a results store: %w", err)
	}
	return nil
}

// postgresClass maps SQLSTATEs to this package's sentinels; see
// https://www.postgresql.org/docs/15/errcodes-appendix.html. Class 08
// (connection_exception) is ErrUnavailable too.
var postgresClass = map[string]error{
	"40001": ErrBusy,        // serialization_failure
	"40P01": ErrBusy,        // deadlock_detected
	"55P03": ErrBusy,        // lock_not_available: lock_timeout
	"53300": ErrUnavailable, // too_many_connections
	"57P01": ErrUnavailable, // admin_shutdown
	"57P02": ErrUnavailable, // crash_shutdown
	"57P03": ErrUnavailable, // cannot_connect_now
	"XX001": ErrDamaged,     // data_corrupted
	"XX002": ErrDamaged,     // index_corrupted
	"42501": ErrUnwritable,  // insufficient_privilege
	"25006": ErrUnwritable,  // read_only_sql_transaction (a standby)
	"53100": ErrUnwritable,  // disk_full
	"3D000": ErrUnwritable,  // invalid_catalog_name: no such database
	"3F000": ErrUnwritable,  // invalid_schema_name
}

// classify maps SQLSTATEs and Go error types, never message text.
func (b postgresBackend) classify(err error) error {
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{ErrBusy, ErrUnavailable, ErrDamaged, ErrUnwritable, ErrNotStore, ErrNewerSchema} {
		if errors.Is(err, sentinel) {
			return err // classified already
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if s, ok := postgresClass[pe.Code]; ok {
			return fmt.Errorf("%w: %w", s, err)
		}
		if strings.HasPrefix(pe.Code, "08") {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	// A connect that ran out of time (connect_timeout) is a server that
	// did not answer; any other deadline is the caller's.
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// savedLocation: oltplab's data directory, else the temporary directory;
// the file names the database.
func (b postgresBackend) savedLocation() ([]string, string) {
	dirs := []string{os.TempDir()}
	if d, err := DataDir(os.Getenv); err == nil {
		dirs = append([]string{d}, dirs...)
	}
	return dirs, "postgres-" + safeName.ReplaceAllString(b.database, "_")
}

var safeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)
