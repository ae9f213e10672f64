package sqlserver

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Index rebuilds (dialect.IndexRebuilder, through enginePart: only where
// the server understands ALTER INDEX ... REBUILD).
//
// SQL Server stores a table's rows in its clustered index, here the
// primary key: rebuilding it rewrites the table (the nonclustered indexes
// keep their keys, which do not change). ALTER INDEX ... REBUILD WITH
// (MAXDOP = 1) rebuilds offline in one thread, so that elapsed minus CPU
// time is what the rebuild waited for. Sizes are the pages in use of
// sys.dm_db_partition_stats (VIEW DATABASE STATE), 8 KiB each.

const sizeSource = "sys.dm_db_partition_stats used_page_count x 8 KiB"

// indexesSQL lists a table's indexes, largest first; @p1 is the table.
const indexesSQL = `SELECT i.name, CAST(i.is_primary_key AS INT), CASE WHEN i.type = 1 THEN 1 ELSE 0 END,
	COALESCE(SUM(ps.used_page_count), 0) * 8192
FROM sys.indexes i LEFT JOIN sys.dm_db_partition_stats ps ON ps.object_id = i.object_id AND ps.index_id = i.index_id
WHERE i.object_id = OBJECT_ID(@p1, N'U') AND i.index_id > 0
GROUP BY i.name, i.is_primary_key, i.type
ORDER BY 4 DESC, i.name`

// indexes lists the indexes of t with their sizes, largest first.
func (d *DB) indexes(ctx context.Context, t tpcc.Table) ([]dialect.Index, error) {
	op := "list the indexes of " + t.String()
	if ok, err := d.HasTable(ctx, t.String()); err != nil {
		return nil, err
	} else if !ok {
		return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s does not exist", t)}
	}
	rows, err := d.db.QueryContext(ctx, indexesSQL, t.String())
	if err != nil {
		return nil, d.wrap(op, err)
	}
	defer rows.Close()
	var out []dialect.Index
	for rows.Next() {
		var ix dialect.Index
		var primary, clustered int64
		if err := rows.Scan(&ix.Name, &primary, &clustered, &ix.SizeBytes); err != nil {
			return nil, d.wrap(op, err)
		}
		ix.Primary, ix.Clustered, ix.SizeSource = primary == 1, clustered == 1, sizeSource
		out = append(out, ix)
	}
	if err := rows.Err(); err != nil {
		return nil, d.wrap(op, err)
	}
	return out, nil
}

// rebuildIndex rebuilds one index of t.
func (d *DB) rebuildIndex(ctx context.Context, t tpcc.Table, index string) (dialect.Rebuild, error) {
	op := "rebuild index " + index + " of " + t.String()
	ixs, err := d.indexes(ctx, t)
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
		return dialect.Rebuild{}, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("table %s has no index %q", t, index)}
	}
	stmt := "ALTER INDEX " + quoteName(index) + " ON " + t.String() + " REBUILD WITH (MAXDOP = 1)"
	if _, err := d.db.ExecContext(ctx, stmt); err != nil {
		return dialect.Rebuild{}, d.wrap(op, err)
	}
	rb := dialect.Rebuild{Statements: []string{stmt}, Rewrites: dialect.RewritesIndex,
		Method: "ALTER INDEX ... REBUILD WITH (MAXDOP = 1): the index built anew from the table, offline, in one thread"}
	if found.Clustered {
		rb.Rewrites = dialect.RewritesTable
		rb.Method = "ALTER INDEX ... REBUILD WITH (MAXDOP = 1) of the clustered index: the table's rows written anew in key order, offline, in one thread"
	}
	return rb, nil
}

// rebuildIndexes rebuilds every index of t with one statement.
func (d *DB) rebuildIndexes(ctx context.Context, t tpcc.Table) (dialect.Rebuild, error) {
	op := "rebuild the indexes of " + t.String()
	ixs, err := d.indexes(ctx, t)
	if err != nil {
		return dialect.Rebuild{}, err
	}
	stmt := "ALTER INDEX ALL ON " + t.String() + " REBUILD WITH (MAXDOP = 1)"
	if _, err := d.db.ExecContext(ctx, stmt); err != nil {
		return dialect.Rebuild{}, d.wrap(op, err)
	}
	rb := dialect.Rebuild{Statements: []string{stmt}, Rewrites: dialect.RewritesIndexes,
		Method: "ALTER INDEX ALL ... REBUILD WITH (MAXDOP = 1): every index built anew, offline, in one thread"}
	for _, ix := range ixs {
		if ix.Clustered {
			rb.Rewrites = dialect.RewritesTable
			rb.Method = "ALTER INDEX ALL ... REBUILD WITH (MAXDOP = 1): the table's rows (its clustered index) and every index written anew, offline, in one thread"
		}
	}
	return rb, nil
}
