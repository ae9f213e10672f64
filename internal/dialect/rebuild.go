package dialect

import (
	"context"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// IndexRebuilder is implemented by a Database that can list a table's
// indexes with their sizes and rebuild them: the index-rebuild scenario
// (`oltplab rebuild`, METHODOLOGY experiment 8) rebuilds the largest index
// of ORDER-LINE after a cold restart and again warm.
//
// Each dialect rebuilds by the statement that honestly rewrites the index
// in its engine, single-threaded so that elapsed minus CPU time is the
// time the rebuild waited (I/O and locks), and says what it rewrote.
// Where an index holds the table's rows (InnoDB's clustered primary key,
// the primary key of an SQLite WITHOUT ROWID table), rebuilding it
// rewrites the table; Index.Clustered says so and Rebuild.Rewrites is
// RewritesTable.
//
// The database must not be in use by a run: the rebuild locks the table.
type IndexRebuilder interface {
	// Indexes lists the indexes of t with their sizes, largest first.
	Indexes(ctx context.Context, t tpcc.Table) ([]Index, error)
	// RebuildIndex rebuilds the index of t named index (one Indexes
	// returned) and returns what ran.
	RebuildIndex(ctx context.Context, t tpcc.Table, index string) (Rebuild, error)
	// RebuildIndexes rebuilds every index of t and returns what ran.
	RebuildIndexes(ctx context.Context, t tpcc.Table) (Rebuild, error)
}

// Index is one index of a table.
type Index struct {
	Name    string `json:"name"`
	Primary bool   `json:"primary"`
	// Clustered: the index holds the table's rows, so rebuilding it
	// rewrites the table.
	Clustered bool `json:"clustered"`
	// SizeBytes is its size on disk; -1 when the engine does not tell
	// this user (SizeSource says why).
	SizeBytes int64 `json:"size_bytes"`
	// SizeSource names where the size comes from ("pg_relation_size").
	SizeSource string `json:"size_source"`
}

// What a rebuild rewrote.
const (
	RewritesIndex   = "index"   // the index alone; the table is only read
	RewritesIndexes = "indexes" // every index of the table; the table is only read
	RewritesTable   = "table"   // the table with its indexes
)

// Rebuild is what a rebuild ran.
type Rebuild struct {
	// Statements are the statements that ran, in order, session settings
	// included.
	Statements []string `json:"statements"`
	// Rewrites is RewritesIndex, RewritesIndexes or RewritesTable.
	Rewrites string `json:"rewrites"`
	// Method says in a sentence how the engine rebuilt, for reports.
	Method string `json:"method"`
}
