// Package dialect is the contract between oltplab's database-neutral code
// (build, run, check, samplers) and one database product. A dialect package
// supplies a Database: DDL, bulk load, statement text, stored procedures,
// an error classifier and the database's own counters. Differences between
// products are data inside those packages; shared code never compares
// dialect names. Optional abilities are separate interfaces found by type
// assertion (hygiene.go, waits.go, datadir.go, tpch.go, interrupt.go, ...).
//
// It imports only tpcc and tpch; dialect packages never import each
// other.
package dialect

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// ConnectTimeout bounds every connection attempt (TCP connect, TLS and the
// protocol handshake) unless the target sets connect_timeout (seconds). A
// port that answers with another protocol, or accepts and never answers,
// fails with a connection error instead of hanging.
const ConnectTimeout = 10 * time.Second

// Style is how the five transactions execute.
type Style int

const (
	// StyleProcedures calls server-side stored procedures, one round trip per
	// transaction (the HammerDB default).
	StyleProcedures Style = iota
	// StyleClientSQL sends each statement from the client inside an explicit
	// transaction (tpcc.ClientSession).
	StyleClientSQL
)

func (s Style) String() string {
	if s == StyleClientSQL {
		return "client-sql"
	}
	return "procedures"
}

// Capabilities is what shared code may know about a dialect, as data.
type Capabilities struct {
	// Procedures: the dialect can run the transactions as stored procedures.
	Procedures bool
	// MaxLoadWorkers bounds parallel load connections (SQLite: 1); 0 means no limit.
	MaxLoadWorkers int
	// MoneyTolerance is the absolute difference under which two money sums are
	// equal in consistency checks: 0 where money is exact (NUMERIC/DECIMAL).
	MoneyTolerance float64
	// TxCountLag is how late the TxCounter may publish a transaction: the
	// figure it reads at an instant misses up to this much of the most
	// recent work (0: counted at commit).
	TxCountLag time.Duration
	// TxCountsStatements says whether the TxCounter counts a statement
	// run outside an explicit transaction as a transaction of its own,
	// as oltplab's samplers run theirs: TPM then leaves out what oltplab
	// itself sent (driver.Result.OwnStatements).
	TxCountsStatements StatementCounting
	// Embedded: the database runs inside oltplab's own process (SQLite), so
	// the driver's CPU per transaction includes the database's work.
	Embedded bool
	// MaxSessions bounds the sessions a run may open at once when no
	// server says how many it accepts (SQLite); 0 leaves it to the
	// server (ConnectionLimiter).
	MaxSessions int
}

// StatementCounting is whether a server's transaction counter counts
// each statement run outside an explicit transaction.
type StatementCounting int

const (
	// StatementsUnknown: it may; the cross-check allows for oltplab's own
	// statements without taking them out of TPM.
	StatementsUnknown StatementCounting = iota
	// StatementsCounted: every such statement is a transaction in the
	// counter (PostgreSQL's xact_commit).
	StatementsCounted
	// StatementsNotCounted: the counter counts COMMIT and ROLLBACK only
	// (MySQL's Com_commit): oltplab's reads add nothing to it.
	StatementsNotCounted
)

// ConnectionLimiter is implemented by databases whose server bounds its
// connections: a run that would open more than it accepts is refused
// before it opens any.
type ConnectionLimiter interface {
	// ConnectionLimit says how many more connections this user may open
	// now.
	ConnectionLimit(ctx context.Context) (ConnectionLimit, error)
}

// ConnectionLimit is what a server accepts of this user now.
type ConnectionLimit struct {
	// Available is how many more connections this user may open.
	Available int
	// Detail says how, for the error that refuses a run: the server's
	// limit, what it reserves and what is open.
	Detail string
}

// Database is one target database opened by a dialect. It is safe for
// concurrent use; each Connect/NewLoader/NewSession returns a value owned by
// one goroutine.
type Database interface {
	// Name is the dialect name recorded with results: "postgres", "mysql", "sqlite".
	Name() string
	Caps() Capabilities
	// Classify maps an error returned by this dialect to a class, by SQLSTATE
	// or server error number, never by message text. nil is ClassNone.
	Classify(err error) ErrClass
	// Version is the server's own version string.
	Version(ctx context.Context) (string, error)
	// Settings returns the key server settings recorded with every result
	// (shared_buffers, synchronous_commit, innodb_flush_log_at_trx_commit, ...).
	Settings(ctx context.Context) (map[string]string, error)

	// Connect opens a plain connection for metadata, NOPM and similar queries.
	Connect(ctx context.Context) (Conn, error)
	// Snapshot runs fn inside one read-only transaction that sees a single
	// consistent snapshot (clause 3.3.2 checks).
	Snapshot(ctx context.Context, fn func(q tpcc.Querier) error) error

	// HasTable reports whether a table of that name exists in the target
	// database (used to tell "schema not built" apart from other errors).
	HasTable(ctx context.Context, name string) (bool, error)
	// DropSchema removes the nine tables, the metadata table and procedures, if present.
	DropSchema(ctx context.Context) error
	// CreateTables creates the nine tables and tpcc.MetaTable without
	// secondary indexes (primary keys only where the engine needs them to load).
	CreateTables(ctx context.Context) error
	// NewLoader opens one load connection.
	NewLoader(ctx context.Context) (Loader, error)
	// CreateIndexes adds the remaining keys and indexes after the data is in.
	CreateIndexes(ctx context.Context) error
	// Analyze refreshes planner statistics.
	Analyze(ctx context.Context) error

	// NewSession opens one virtual user's connection.
	NewSession(ctx context.Context, style Style) (Session, error)
	Close() error
}

// Conn is a plain connection.
type Conn interface {
	tpcc.Querier
	Close() error
}

// Loader accepts generated rows of any table, in any order, and makes them
// durable no later than Close. Rows are reused by the generator: Add must
// encode or copy what it needs before returning.
type Loader interface {
	Add(ctx context.Context, r tpcc.Row) error
	// Close flushes what was added and closes the connection.
	Close(ctx context.Context) error
}

// LoaderGroup is implemented by dialects that load faster when the build's
// loaders share the work (PostgreSQL: one COPY per table, each in the
// transaction that truncated it, so the rows arrive frozen). NewLoaders
// opens n loaders at once, each owned by one goroutine; every one must be
// closed, and the load is durable no later than the last Close.
type LoaderGroup interface {
	NewLoaders(ctx context.Context, n int) ([]Loader, error)
}

// Session runs the five transactions for one virtual user. NewOrder returns
// tpcc.ErrRollback for the expected rollback (clause 2.4.2.3). Outputs are
// written into the inputs (Delivery.Skipped, StockLevel.LowStock).
type Session interface {
	NewOrder(ctx context.Context, in *tpcc.NewOrder) error
	Payment(ctx context.Context, in *tpcc.Payment) error
	OrderStatus(ctx context.Context, in *tpcc.OrderStatus) error
	Delivery(ctx context.Context, in *tpcc.Delivery) error
	StockLevel(ctx context.Context, in *tpcc.StockLevel) error
	Close() error
}

// ProcedureInstaller is implemented by dialects with stored procedures;
// build calls it after CreateIndexes.
type ProcedureInstaller interface {
	InstallProcedures(ctx context.Context) error
}

// TxCounter reads the database's own transaction counter (commits plus
// rollbacks of the target database), from which TPM is computed.
type TxCounter interface {
	TxCount(ctx context.Context) (int64, error)
	// TxCountSource labels the counter in results, e.g.
	// "pg_stat_database xact_commit+xact_rollback".
	TxCountSource() string
}

// ServerStartReader reads when the database server last started, or last
// started over without a restart (PostgreSQL's reset of every session
// after one backend crashed). A run reads it at both edges of its measured
// window: a server that started (over) in between counted its
// transactions again from zero (and may have lost its last commits), so
// the window's database figures do not describe it.
type ServerStartReader interface {
	ServerStartTime(ctx context.Context) (time.Time, error)
}
