package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Index rebuilds (dialect.IndexRebuilder).
//
// REINDEX fills a sorter from a scan of the table, empties the index's
// b-tree and writes the sorted entries back. The tables with a composite
// key are WITHOUT ROWID (schema.go): their primary key's b-tree is the
// table itself, so REINDEX of that key rewrites the table. Sizes are the
// pages of each b-tree (the dbstat virtual table), exact.
var _ dialect.IndexRebuilder = (*Database)(nil)

const sizeFromDBStat = "dbstat (pages of the b-tree)"

// Indexes lists the indexes of t, largest first.
func (d *Database) Indexes(ctx context.Context, t tpcc.Table) ([]dialect.Index, error) {
	op := "list the indexes of " + t.String()
	c, err := d.conn(ctx, op)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var withoutRowid int
	err = c.QueryRowContext(ctx, "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", t.String()).Scan(&withoutRowid)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s does not exist", t)}
		}
		return nil, d.wrap(op, err)
	}
	rows, err := c.QueryContext(ctx, "SELECT name, origin FROM pragma_index_list(?)", t.String())
	if err != nil {
		return nil, d.wrap(op, err)
	}
	var out []dialect.Index
	for rows.Next() {
		var ix dialect.Index
		var origin string
		if err := rows.Scan(&ix.Name, &origin); err != nil {
			rows.Close()
			return nil, d.wrap(op, err)
		}
		ix.Primary = origin == "pk"
		ix.Clustered = ix.Primary && withoutRowid == 1
		ix.SizeSource = sizeFromDBStat
		out = append(out, ix)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, d.wrap(op, err)
	}
	for i := range out {
		// dbstat names a WITHOUT ROWID table's key b-tree after the table.
		btree := out[i].Name
		if out[i].Clustered {
			btree = t.String()
		}
		if err := c.QueryRowContext(ctx, "SELECT coalesce(sum(pgsize), 0) FROM dbstat('main') WHERE name = ?", btree).Scan(&out[i].SizeBytes); err != nil {
			return nil, d.wrap(op, err)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SizeBytes != out[j].SizeBytes {
			return out[i].SizeBytes > out[j].SizeBytes
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// RebuildIndex runs REINDEX on one index of t.
func (d *Database) RebuildIndex(ctx context.Context, t tpcc.Table, index string) (dialect.Rebuild, error) {
	op := "rebuild index " + index + " of " + t.String()
	ixs, err := d.Indexes(ctx, t)
	if err != nil {
		return dialect.Rebuild{}, err
	}
	var found *dialect.Index
	for i := range ixs {
		if ixs[i].Name == index {
			found = &ixs[i]
		}
	}
	if found == nil {
		return dialect.Rebuild{}, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s has no index %q", t, index)}
	}
	r := dialect.Rebuild{Statements: []string{"REINDEX " + quoteIdent(index)}, Rewrites: dialect.RewritesIndex,
		Method: "REINDEX: the index is filled from a scan of the table through a sorter, then its b-tree is emptied and written anew"}
	if found.Clustered {
		r.Rewrites = dialect.RewritesTable
		r.Method = "the primary key of a WITHOUT ROWID table is the table: REINDEX sorts its rows, empties the b-tree and writes them anew"
	}
	return r, d.runRebuild(ctx, op, r.Statements)
}

// RebuildIndexes runs REINDEX on t: every index of it, the key of a
// WITHOUT ROWID table (the table itself) included.
func (d *Database) RebuildIndexes(ctx context.Context, t tpcc.Table) (dialect.Rebuild, error) {
	op := "rebuild the indexes of " + t.String()
	ixs, err := d.Indexes(ctx, t)
	if err != nil {
		return dialect.Rebuild{}, err
	}
	r := dialect.Rebuild{Statements: []string{"REINDEX " + quoteIdent(t.String())}, Rewrites: dialect.RewritesIndexes,
		Method: "REINDEX of the table: each index is filled from a scan of the table through a sorter, emptied and written anew"}
	for _, ix := range ixs {
		if ix.Clustered {
			r.Rewrites = dialect.RewritesTable
			r.Method += "; the primary key of a WITHOUT ROWID table is the table, which is rewritten with it"
		}
	}
	return r, d.runRebuild(ctx, op, r.Statements)
}

// quoteIdent quotes an SQLite identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// runRebuild runs stmts on a pooled connection (the target's page cache
// settings).
func (d *Database) runRebuild(ctx context.Context, op string, stmts []string) error {
	c, err := d.conn(ctx, op)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return d.wrap(op, err)
		}
	}
	return nil
}
