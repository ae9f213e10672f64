package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Index rebuilds (dialect.IndexRebuilder).
//
// InnoDB stores a table's rows in its primary key (the clustered index):
// rebuilding that index is rebuilding the table, which ALTER TABLE ...
// FORCE does in place (ALGORITHM=INPLACE: the rows are read in key order
// and written into a new clustered index with every secondary index built
// anew, then swapped in). A secondary index is rebuilt by dropping it and
// adding it again with the same definition, two statements: the add reads
// the clustered index, sorts and builds. Both run in one server thread; a
// canceled rebuild is killed (killOnCancel) and InnoDB rolls it back.
//
// Sizes are mysql.innodb_index_stats' "size" (pages, times
// innodb_page_size) as of the table's last statistics update; a user who
// may not read that table gets the clustered index's size from
// information_schema.TABLES (DATA_LENGTH) and no size (-1) for secondary
// indexes.
var _ dialect.IndexRebuilder = (*DB)(nil)

const (
	sizeFromStats  = "mysql.innodb_index_stats size (as of the last statistics update)"
	sizeFromTables = "information_schema.TABLES DATA_LENGTH (as of the last statistics update)"
)

// indexColumn is one column of an index (information_schema.STATISTICS).
type indexColumn struct {
	index    string
	unique   bool
	column   string
	subPart  sql.NullInt64
	position int
}

// Indexes lists the indexes of t, largest first.
func (d *DB) Indexes(ctx context.Context, t tpcc.Table) ([]dialect.Index, error) {
	op := "list the indexes of " + t.String()
	cols, err := d.indexColumns(ctx, t)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	if len(cols) == 0 {
		ok, err := d.HasTable(ctx, t.String())
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s does not exist", t)}
		}
		return nil, nil
	}
	sizes, source, err := d.indexSizes(ctx, t)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	seen := map[string]bool{}
	var out []dialect.Index
	for _, c := range cols {
		if seen[c.index] {
			continue
		}
		seen[c.index] = true
		size, ok := sizes[c.index]
		if !ok {
			size = -1
		}
		primary := c.index == "PRIMARY"
		out = append(out, dialect.Index{Name: c.index, Primary: primary, Clustered: primary, SizeBytes: size, SizeSource: source})
	}
	// A table without a primary key is clustered on its first unique
	// NOT NULL index or on a hidden row id (GEN_CLUST_INDEX), which
	// STATISTICS does not list: the listed indexes are secondary then.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SizeBytes != out[j].SizeBytes {
			return out[i].SizeBytes > out[j].SizeBytes
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// indexColumns reads the columns of every index of t, by index and
// position.
func (d *DB) indexColumns(ctx context.Context, t tpcc.Table) ([]indexColumn, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART, SEQ_IN_INDEX
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
		ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX`, t.String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []indexColumn
	for rows.Next() {
		var c indexColumn
		var nonUnique int
		if err := rows.Scan(&c.index, &nonUnique, &c.column, &c.subPart, &c.position); err != nil {
			return nil, err
		}
		c.unique = nonUnique == 0
		out = append(out, c)
	}
	return out, rows.Err()
}

// indexSizes returns the size of t's indexes in bytes and where it comes
// from.
func (d *DB) indexSizes(ctx context.Context, t tpcc.Table) (map[string]int64, string, error) {
	sizes := map[string]int64{}
	rows, err := d.db.QueryContext(ctx, `SELECT index_name, stat_value * @@innodb_page_size
		FROM mysql.innodb_index_stats WHERE database_name = DATABASE() AND table_name = ? AND stat_name = 'size'`, t.String())
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var name string
			var size int64
			if err := rows.Scan(&name, &size); err != nil {
				return nil, "", err
			}
			sizes[name] = size
		}
		return sizes, sizeFromStats, rows.Err()
	}
	switch errno(err) {
	case errTableAccessDenied, 1044:
	default:
		return nil, "", err
	}
	var data sql.NullInt64
	if err := d.db.QueryRowContext(ctx, `SELECT DATA_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, t.String()).Scan(&data); err != nil {
		return nil, "", err
	}
	if data.Valid {
		sizes["PRIMARY"] = data.Int64
	}
	return sizes, sizeFromTables, nil
}

// RebuildIndex rebuilds one index of t: the table for its primary key, a
// drop and an add for a secondary index.
func (d *DB) RebuildIndex(ctx context.Context, t tpcc.Table, index string) (dialect.Rebuild, error) {
	op := "rebuild index " + index + " of " + t.String()
	cols, err := d.indexColumns(ctx, t)
	if err != nil {
		return dialect.Rebuild{}, d.wrap(op, err)
	}
	var def []indexColumn
	for _, c := range cols {
		if c.index == index {
			def = append(def, c)
		}
	}
	if len(def) == 0 {
		return dialect.Rebuild{}, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("table %s has no index %q", t, index)}
	}
	if index == "PRIMARY" {
		r := tableRebuild(t)
		r.Method = "InnoDB keeps the rows in the primary key (the clustered index): rebuilding it rebuilds the table. " + r.Method
		return r, d.runRebuild(ctx, op, r.Statements)
	}
	parts := make([]string, len(def))
	for i, c := range def {
		parts[i] = quoteIdent(c.column)
		if c.subPart.Valid {
			parts[i] += "(" + strconv.FormatInt(c.subPart.Int64, 10) + ")"
		}
	}
	add := "ADD INDEX "
	if def[0].unique {
		add = "ADD UNIQUE INDEX "
	}
	tbl := quoteIdent(t.String())
	r := dialect.Rebuild{
		Statements: []string{
			"ALTER TABLE " + tbl + " DROP INDEX " + quoteIdent(index),
			"ALTER TABLE " + tbl + " " + add + quoteIdent(index) + " (" + strings.Join(parts, ", ") + ")",
		},
		Rewrites: dialect.RewritesIndex,
		Method:   "the secondary index is dropped and added again with the same definition: the add reads the clustered index, sorts and builds it (one server thread)",
	}
	return r, d.runRebuild(ctx, op, r.Statements)
}

// RebuildIndexes rebuilds the table, which rebuilds every index of it.
func (d *DB) RebuildIndexes(ctx context.Context, t tpcc.Table) (dialect.Rebuild, error) {
	op := "rebuild the indexes of " + t.String()
	if ok, err := d.HasTable(ctx, t.String()); err != nil {
		return dialect.Rebuild{}, err
	} else if !ok {
		return dialect.Rebuild{}, &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op, Err: fmt.Errorf("table %s does not exist", t)}
	}
	r := tableRebuild(t)
	r.Method = "InnoDB rebuilds every index of a table by rebuilding the table. " + r.Method
	return r, d.runRebuild(ctx, op, r.Statements)
}

// tableRebuild is ALTER TABLE ... FORCE, in place.
func tableRebuild(t tpcc.Table) dialect.Rebuild {
	return dialect.Rebuild{
		Statements: []string{"ALTER TABLE " + quoteIdent(t.String()) + " FORCE, ALGORITHM=INPLACE"},
		Rewrites:   dialect.RewritesTable,
		Method:     "ALTER TABLE ... FORCE, ALGORITHM=INPLACE reads the rows in key order into a new clustered index, builds the secondary indexes anew and swaps the new table in (one server thread)",
	}
}

// runRebuild runs stmts on one connection.
func (d *DB) runRebuild(ctx context.Context, op string, stmts []string) error {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return d.wrap(op, err)
	}
	defer c.Close()
	stop, err := d.killOnCancel(ctx, c)
	if err != nil {
		return d.wrap(op, err)
	}
	defer stop()
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return d.notPermitted(op, "ALTER TABLE needs the ALTER, INDEX, CREATE and INSERT privileges on the table", err)
		}
	}
	return nil
}
