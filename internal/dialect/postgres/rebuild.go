package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Index rebuilds (dialect.IndexRebuilder).
//
// PostgreSQL keeps every index, the primary key's included, apart from
// the table's heap: REINDEX INDEX builds a new copy of the index from a
// scan of the heap, sorts it and swaps it in; the heap is read, not
// written. The rebuild runs in one process (max_parallel_maintenance_workers
// = 0), so that elapsed minus the server's CPU time is the time it waited,
// with the server's own maintenance_work_mem for the sort. Sizes are
// pg_relation_size, exact.
var _ dialect.IndexRebuilder = (*Database)(nil)

// rebuildSettings make a rebuild single-threaded.
const rebuildSettings = "SET max_parallel_maintenance_workers = 0"

// Indexes lists the indexes of t, largest first.
func (d *Database) Indexes(ctx context.Context, t tpcc.Table) ([]dialect.Index, error) {
	op := "list the indexes of " + t.String()
	var out []dialect.Index
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		var exists bool
		if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", t.String()).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s does not exist", t)}
		}
		rows, err := c.Query(ctx, `SELECT c.relname, i.indisprimary, pg_relation_size(c.oid)
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = to_regclass($1)
			ORDER BY 3 DESC, 1`, t.String())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			ix := dialect.Index{SizeSource: "pg_relation_size"}
			if err := rows.Scan(&ix.Name, &ix.Primary, &ix.SizeBytes); err != nil {
				return err
			}
			out = append(out, ix)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, wrapPG(op, err)
	}
	return out, nil
}

// RebuildIndex runs REINDEX INDEX on one index of t.
func (d *Database) RebuildIndex(ctx context.Context, t tpcc.Table, index string) (dialect.Rebuild, error) {
	if err := d.checkIndex(ctx, t, index); err != nil {
		return dialect.Rebuild{}, err
	}
	r := dialect.Rebuild{
		Statements: []string{rebuildSettings, "REINDEX INDEX " + quoteIdent(index)},
		Rewrites:   dialect.RewritesIndex,
		Method:     "REINDEX INDEX: a new copy of the index is built from a scan of the table, sorted, and swapped in; the table is only read (one process)",
	}
	return r, d.rebuild(ctx, "rebuild index "+index, r.Statements)
}

// RebuildIndexes runs REINDEX TABLE on t.
func (d *Database) RebuildIndexes(ctx context.Context, t tpcc.Table) (dialect.Rebuild, error) {
	if _, err := d.Indexes(ctx, t); err != nil {
		return dialect.Rebuild{}, err
	}
	r := dialect.Rebuild{
		Statements: []string{rebuildSettings, "REINDEX TABLE " + quoteIdent(t.String())},
		Rewrites:   dialect.RewritesIndexes,
		Method:     "REINDEX TABLE: every index of the table is built anew from a scan of the table, one after the other; the table is only read (one process)",
	}
	return r, d.rebuild(ctx, "rebuild the indexes of "+t.String(), r.Statements)
}

// checkIndex makes sure index is an index of t.
func (d *Database) checkIndex(ctx context.Context, t tpcc.Table, index string) error {
	ixs, err := d.Indexes(ctx, t)
	if err != nil {
		return err
	}
	for _, ix := range ixs {
		if ix.Name == index {
			return nil
		}
	}
	return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: "rebuild index " + index,
		Err: fmt.Errorf("table %s has no index %q", t, index)}
}

// rebuild runs stmts on a connection of its own.
func (d *Database) rebuild(ctx context.Context, op string, stmts []string) error {
	return d.admin(ctx, op, func(c *pgx.Conn) error {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
