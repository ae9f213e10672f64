package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

var _ dialect.TPCH = (*Database)(nil)

// tpchFlavor is SQLite's way with the query texts' vendor constructs
// (clause 2.2.3.3): dates are TEXT 'YYYY-MM-DD' (which compare in date
// order) moved by date(); extract and substring are strftime and substr;
// decimals are REAL, so a constant decimal expression is rounded to the
// cent (0.06 + 0.01 is 0.069999... in binary, and Q6 would miss the
// discounts of 0.07).
type tpchFlavor struct{}

func (tpchFlavor) Date(iso string) string { return "'" + iso + "'" }

func (tpchFlavor) DateAdd(iso string, n int, u tpch.Unit) string {
	return fmt.Sprintf("date('%s', '%+d %ss')", iso, n, u)
}

func (tpchFlavor) Year(expr string) string {
	return "cast(strftime('%Y', " + expr + ") as integer)"
}

func (tpchFlavor) Substring(expr string, from, length int) string {
	return fmt.Sprintf("substr(%s, %d, %d)", expr, from, length)
}

func (tpchFlavor) Decimal(expr string) string { return "round(" + expr + ", 2)" }

func (tpchFlavor) Limit(n int) string { return "limit " + strconv.Itoa(n) }

// TPCHFlavor implements dialect.TPCH.
func (d *Database) TPCHFlavor() tpch.Flavor { return tpchFlavor{} }

// tpchType is the SQLite type of a TPC-H column: decimals are REAL (as
// TPC-C money is), dates TEXT.
func tpchType(c tpch.Column) string {
	switch c.Type {
	case tpch.Identifier, tpch.Integer:
		return "INTEGER"
	case tpch.Decimal:
		return "REAL"
	}
	return "TEXT"
}

// createTPCHTableSQL: a table whose primary key is one identifier keeps
// its rows in that key's order (INTEGER PRIMARY KEY is the rowid), which
// costs the load nothing since the single loader inserts in key order.
func createTPCHTableSQL(t tpch.Table) string {
	pk := t.PrimaryKey()
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.String() + " (")
	for i, c := range t.Columns() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + tpchType(c) + " NOT NULL")
		if len(pk) == 1 && pk[0] == c.Name {
			b.WriteString(" PRIMARY KEY")
		}
	}
	b.WriteString(")")
	return b.String()
}

// tpchMetaSQL creates the table that marks the TPC-H schema as oltplab's.
const tpchMetaSQL = "CREATE TABLE " + tpch.MetaTable + " (k TEXT NOT NULL PRIMARY KEY, v TEXT NOT NULL)"

// CreateTPCHTables creates the file if needed, the metadata table and the
// eight tables; it fails if one exists.
func (d *Database) CreateTPCHTables(ctx context.Context) error {
	db := d.adminDB("rwc", "")
	defer db.Close()
	stmts := []string{tpchMetaSQL}
	for _, t := range tpch.Tables {
		stmts = append(stmts, createTPCHTableSQL(t))
	}
	if err := execAll(ctx, db, stmts); err != nil {
		return d.wrap("create tables", err)
	}
	return nil
}

// DropTPCHSchema drops the eight tables, then the metadata table, and
// gives the file's pages back when nothing is left in it.
func (d *Database) DropTPCHSchema(ctx context.Context) error {
	const op = "drop TPC-H schema"
	ok, err := d.fileExists()
	if err != nil || !ok {
		return err
	}
	db := d.adminDB("rw", "")
	defer db.Close()
	var stmts []string
	for _, t := range tpch.Tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+t.String())
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS "+tpch.MetaTable)
	if err := execAll(ctx, db, stmts); err != nil {
		return d.wrap(op, err)
	}
	var left int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&left); err != nil {
		return d.wrap(op, err)
	}
	if left == 0 {
		if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
			return d.wrap(op+": vacuum", err)
		}
	}
	return nil
}

// CreateTPCHIndexes adds the composite primary keys as unique indexes
// (SQLite adds no primary key to an existing table) and the foreign-key
// indexes.
func (d *Database) CreateTPCHIndexes(ctx context.Context) error {
	const op = "create indexes"
	if err := d.exists(op); err != nil {
		return err
	}
	var stmts []string
	for _, t := range tpch.Tables {
		if pk := t.PrimaryKey(); len(pk) > 1 {
			stmts = append(stmts, fmt.Sprintf("CREATE UNIQUE INDEX %s_pkey ON %s (%s)", t, t, strings.Join(pk, ", ")))
		}
	}
	for _, fk := range tpch.ForeignKeys {
		if !fk.CoveredByPrimaryKey() {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s_%s_idx ON %s (%s)", fk.Table, strings.Join(fk.Columns, "_"),
				fk.Table, strings.Join(fk.Columns, ", ")))
		}
	}
	db := d.adminDB("rw", fmt.Sprintf("&_pragma=cache_size(-%d)&_pragma=temp_store(memory)", loadCacheKiB))
	defer db.Close()
	if err := execAll(ctx, db, stmts); err != nil {
		return d.wrap(op, err)
	}
	return nil
}

// AnalyzeTPCH implements dialect.TPCH.
func (d *Database) AnalyzeTPCH(ctx context.Context) error { return d.Analyze(ctx) }

// tpchRowsPerStmt is the number of rows of one multi-row INSERT.
const tpchRowsPerStmt = 128

// tpchLoader inserts on one connection (SQLite has one writer) with a
// prepared multi-row INSERT per table, committing about every
// loadRowsPerTx rows.
type tpchLoader struct {
	d        *Database
	db       *sql.DB
	c        *sql.Conn
	batches  [tpch.TableCount]tpchBatch
	inTx     bool
	rowsInTx int
}

type tpchBatch struct {
	full *sql.Stmt
	args []any
	n    int
}

// NewTPCHLoader opens the load connection, which does not sync until Close.
func (d *Database) NewTPCHLoader(ctx context.Context) (dialect.TPCHLoader, error) {
	const op = "open load connection"
	if err := d.exists(op); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(d.path, "rw", loadSynchronous, fmt.Sprintf("&_pragma=cache_size(-%d)", loadCacheKiB)))
	if err != nil {
		return nil, d.wrap(op, err)
	}
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, d.wrap(op, err)
	}
	return &tpchLoader{d: d, db: db, c: c}, nil
}

func tpchInsertSQL(t tpch.Table, rows int) string {
	cols := t.ColumnNames()
	tuple := "(?" + strings.Repeat(",?", len(cols)-1) + ")"
	return "INSERT INTO " + t.String() + " (" + strings.Join(cols, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+",", rows), ",")
}

// Add implements dialect.TPCHLoader.
func (l *tpchLoader) Add(ctx context.Context, r tpch.Row) error {
	t := r.Table()
	b := &l.batches[t]
	b.args = r.AppendArgs(b.args)
	if b.n++; b.n == tpchRowsPerStmt {
		return l.flush(ctx, t)
	}
	return nil
}

func (l *tpchLoader) flush(ctx context.Context, t tpch.Table) error {
	b := &l.batches[t]
	if b.n == 0 {
		return nil
	}
	if !l.inTx {
		if _, err := l.c.ExecContext(ctx, "BEGIN"); err != nil {
			return l.d.wrap("load: begin", err)
		}
		l.inTx = true
	}
	var err error
	if b.n == tpchRowsPerStmt {
		if b.full == nil {
			if b.full, err = l.c.PrepareContext(ctx, tpchInsertSQL(t, tpchRowsPerStmt)); err != nil {
				return l.d.wrap("load "+t.String()+": prepare", err)
			}
		}
		_, err = b.full.ExecContext(ctx, b.args...)
	} else {
		_, err = l.c.ExecContext(ctx, tpchInsertSQL(t, b.n), b.args...)
	}
	if err != nil {
		return l.d.wrap(fmt.Sprintf("load %d rows of %s", b.n, t), err)
	}
	l.rowsInTx += b.n
	clear(b.args)
	b.args, b.n = b.args[:0], 0
	if l.rowsInTx >= loadRowsPerTx {
		if _, err := l.c.ExecContext(ctx, "COMMIT"); err != nil {
			return l.d.wrap("load: commit", err)
		}
		l.inTx, l.rowsInTx = false, 0
	}
	return nil
}

// Close inserts what is buffered, commits, checkpoints the WAL into the
// database file with a sync, and closes the connection.
func (l *tpchLoader) Close(ctx context.Context) error {
	var err error
	for _, t := range tpch.Tables {
		if err = l.flush(ctx, t); err != nil {
			break
		}
	}
	if err == nil && l.inTx {
		if _, err = l.c.ExecContext(ctx, "COMMIT"); err == nil {
			l.inTx = false
		}
	}
	if err == nil {
		for _, s := range []string{"PRAGMA synchronous=FULL", "PRAGMA wal_checkpoint(TRUNCATE)"} {
			if _, err = l.c.ExecContext(ctx, s); err != nil {
				break
			}
		}
	}
	if l.inTx {
		_, _ = l.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	for i := range l.batches {
		if s := l.batches[i].full; s != nil {
			_ = s.Close()
		}
	}
	_ = l.c.Close()
	if cerr := l.db.Close(); err == nil {
		err = cerr
	}
	return l.d.wrap("load", err)
}

// tpchSession is a connection of the pool with case-sensitive LIKE, as
// the specification's LIKE is.
type tpchSession struct {
	d *Database
	c *sql.Conn
}

// NewTPCHSession implements dialect.TPCH.
func (d *Database) NewTPCHSession(ctx context.Context) (dialect.TPCHSession, error) {
	const op = "open query connection"
	if err := d.exists(op); err != nil {
		return nil, err
	}
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	if _, err := c.ExecContext(ctx, "PRAGMA case_sensitive_like = ON"); err != nil {
		_ = c.Close()
		return nil, d.wrap(op, err)
	}
	return &tpchSession{d: d, c: c}, nil
}

func (s *tpchSession) Exec(ctx context.Context, sql string) error {
	_, err := s.c.ExecContext(ctx, sql)
	return s.d.wrap("run statement", err)
}

// ExecTx runs stmts in one write transaction, taken at its start
// (BEGIN IMMEDIATE: readers go on in WAL mode; another writer waits up
// to busy_timeout).
func (s *tpchSession) ExecTx(ctx context.Context, stmts []string) ([]int64, error) {
	if _, err := s.c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, s.d.wrap("begin", err)
	}
	rows := make([]int64, len(stmts))
	err := func() error {
		for i, st := range stmts {
			r, err := s.c.ExecContext(ctx, st)
			if err != nil {
				return s.d.wrap(fmt.Sprintf("statement %d of %d", i+1, len(stmts)), err)
			}
			if rows[i], err = r.RowsAffected(); err != nil {
				return s.d.wrap(fmt.Sprintf("statement %d of %d", i+1, len(stmts)), err)
			}
		}
		_, err := s.c.ExecContext(ctx, "COMMIT")
		return s.d.wrap("commit", err)
	}()
	if err != nil {
		_, _ = s.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return nil, err
	}
	return rows, nil
}

// Query returns the values as text: integers in decimal, reals in the
// shortest form that reads back the same.
func (s *tpchSession) Query(ctx context.Context, sql string) ([][]string, error) {
	rows, err := s.c.QueryContext(ctx, sql)
	if err != nil {
		return nil, s.d.wrap("run query", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, s.d.wrap("run query", err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.d.wrap("run query", err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case int64:
				row[i] = strconv.FormatInt(v, 10)
			case float64:
				row[i] = strconv.FormatFloat(v, 'f', -1, 64)
			case []byte:
				row[i] = string(v)
			default:
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, s.d.wrap("run query", err)
	}
	return out, nil
}

// Close gives the connection back to the pool with LIKE as it was.
func (s *tpchSession) Close() error {
	_, err := s.c.ExecContext(context.Background(), "PRAGMA case_sensitive_like = OFF")
	if cerr := s.c.Close(); err == nil {
		err = cerr
	}
	return s.d.wrap("close query connection", err)
}
