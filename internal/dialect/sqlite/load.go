package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Load batching: each table gets a prepared multi-row INSERT, and the
// connection commits about every loadRowsPerTx rows. SQLite has one writer,
// so Caps().MaxLoadWorkers is 1 and all of this runs on one connection.
const (
	loadRowsPerStmt = 64
	loadRowsPerTx   = 100000
)

// loader implements dialect.Loader on its own connection, with
// synchronous=OFF: nothing is synced until the final checkpoint. A build
// that fails half-way (even by a crash) is rebuilt with `build --drop`.
type loader struct {
	d        *Database
	db       *sql.DB
	c        *sql.Conn
	batches  []tableBatch // indexed by tpcc.Table
	inTx     bool
	rowsInTx int
}

// tableBatch buffers the arguments of up to loadRowsPerStmt rows of one table.
type tableBatch struct {
	table tpcc.Table
	cols  int
	full  *sql.Stmt // INSERT of loadRowsPerStmt rows, prepared on first use
	args  []any
	n     int // rows in args
}

var _ dialect.Loader = (*loader)(nil)

// NewLoader implements dialect.Database.
func (d *Database) NewLoader(ctx context.Context) (dialect.Loader, error) {
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
	l := &loader{d: d, db: db, c: c, batches: make([]tableBatch, len(tpcc.Tables))}
	for _, t := range tpcc.Tables {
		cols := len(t.Columns())
		l.batches[t] = tableBatch{table: t, cols: cols, args: make([]any, 0, cols*loadRowsPerStmt)}
	}
	return l, nil
}

// insertSQL is the INSERT of rows rows of t, columns in tpcc order.
func insertSQL(t tpcc.Table, rows int) string {
	cols := t.Columns()
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(t.String())
	b.WriteString(" (")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(") VALUES ")
	tuple := "(?" + strings.Repeat(",?", len(cols)-1) + ")"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(tuple)
	}
	return b.String()
}

// Add implements dialect.Loader. The row's values are appended to the
// table's batch (AppendArgs copies what the reused row holds).
func (l *loader) Add(ctx context.Context, r tpcc.Row) error {
	t := r.Table()
	if t < 0 || int(t) >= len(l.batches) {
		return fmt.Errorf("load: row of unknown table %d", t)
	}
	b := &l.batches[t]
	b.args = r.AppendArgs(b.args)
	b.n++
	if len(b.args) != b.n*b.cols {
		return fmt.Errorf("load %s: row has %d values, want %d", t, len(b.args)-(b.n-1)*b.cols, b.cols)
	}
	if b.n == loadRowsPerStmt {
		return l.flush(ctx, b)
	}
	return nil
}

// flush inserts the buffered rows of b, inside the load transaction.
func (l *loader) flush(ctx context.Context, b *tableBatch) error {
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
	if b.n == loadRowsPerStmt {
		if b.full == nil {
			if b.full, err = l.c.PrepareContext(ctx, insertSQL(b.table, loadRowsPerStmt)); err != nil {
				return l.d.wrap("load "+b.table.String()+": prepare", err)
			}
		}
		_, err = b.full.ExecContext(ctx, b.args...)
	} else {
		_, err = l.c.ExecContext(ctx, insertSQL(b.table, b.n), b.args...)
	}
	if err != nil {
		return l.d.wrap(fmt.Sprintf("load %d rows of %s", b.n, b.table), err)
	}
	l.rowsInTx += b.n
	clear(b.args) // drop references to the strings just inserted
	b.args, b.n = b.args[:0], 0
	if l.rowsInTx >= loadRowsPerTx {
		return l.commit(ctx)
	}
	return nil
}

func (l *loader) commit(ctx context.Context) error {
	if !l.inTx {
		return nil
	}
	if _, err := l.c.ExecContext(ctx, "COMMIT"); err != nil {
		return l.d.wrap("load: commit", err)
	}
	l.inTx, l.rowsInTx = false, 0
	return nil
}

// Close implements dialect.Loader: it inserts what is buffered, commits,
// checkpoints the WAL into the database file (syncing it) and closes the
// connection. The connection is closed even when that fails.
func (l *loader) Close(ctx context.Context) error {
	var err error
	for i := range l.batches {
		if err = l.flush(ctx, &l.batches[i]); err != nil {
			break
		}
	}
	if err == nil {
		err = l.commit(ctx)
	}
	if err == nil {
		// With synchronous=FULL the checkpoint syncs the WAL and then the
		// database file: the load is durable when Close returns.
		for _, s := range []string{"PRAGMA synchronous=FULL", "PRAGMA wal_checkpoint(TRUNCATE)"} {
			if _, cerr := l.c.ExecContext(ctx, s); cerr != nil {
				err = l.d.wrap("load: checkpoint", cerr)
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
	if cerr := l.db.Close(); cerr != nil && err == nil {
		err = l.d.wrap("load: close", cerr)
	}
	return err
}
