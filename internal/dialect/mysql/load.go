package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// loadMode is how rows reach the server. LOAD DATA is the default because
// it measured faster: 10 warehouses with 2 loaders loaded in 45.7 s against
// 84.3 s with 1 MiB multi-row INSERTs, in the same BenchmarkBuildVariants
// run (MariaDB 10.11, 2 cores shared with other work).
type loadMode int

const (
	// loadInfile streams tpcc.Row.AppendTSV text through LOAD DATA LOCAL
	// INFILE 'Reader::name', one statement per run of one table.
	loadInfile loadMode = iota
	// loadInsert sends multi-row INSERT statements: the fallback when the
	// server refuses LOCAL INFILE (local_infile=OFF).
	loadInsert
)

func (m loadMode) String() string {
	if m == loadInsert {
		return "multi-row INSERT"
	}
	return "LOAD DATA LOCAL INFILE"
}

// Sizes of the buffers that carry rows to the server.
const (
	// chunkSize: TSV is handed to the LOAD DATA stream in buffers of this
	// size; it is also the most a table that is not being streamed holds
	// before the loader switches the stream to it.
	chunkSize = 64 << 10
	// insertSize: the TSV converted into one multi-row INSERT (bounded by
	// max_allowed_packet/2 at run time).
	insertSize = 1 << 20
)

// localInfileRefused lists the errors of a server that refuses LOAD DATA
// LOCAL INFILE: MariaDB's ER_NOT_ALLOWED_COMMAND and MySQL 8's
// ER_CLIENT_LOCAL_FILES_DISABLED.
var localInfileRefused = map[uint16]bool{1148: true, 3948: true}

// readerSeq makes reader names unique within the process.
var readerSeq atomic.Uint64

func loadDataSQL(t tpcc.Table, reader string) string {
	// The defaults of LOAD DATA are exactly the TSV of tpcc.Row.AppendTSV;
	// they are spelled out so that no server default can change them.
	return "LOAD DATA LOCAL INFILE 'Reader::" + reader + "' INTO TABLE " + t.String() +
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ENCLOSED BY '' ESCAPED BY '\\\\'" +
		" LINES TERMINATED BY '\\n' (" + strings.Join(t.Columns(), ", ") + ")"
}

// probeLoadMode decides, once per database, between LOAD DATA LOCAL INFILE
// and INSERT: it loads zero rows into the metadata table and looks at the
// error number.
func (d *DB) probeLoadMode(ctx context.Context, c *sql.Conn) (loadMode, error) {
	d.loadOnce.Do(func() {
		if d.forceLoadMode != nil {
			d.loadMode = *d.forceLoadMode
			return
		}
		name := "oltplab-probe-" + strconv.FormatUint(readerSeq.Add(1), 10)
		mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(nil) })
		defer mysql.DeregisterReaderHandler(name)
		_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+tpcc.MetaTable+" (k, v)")
		switch {
		case err == nil:
			d.loadMode = loadInfile
		case localInfileRefused[errno(err)]:
			d.log.Info("server refuses LOAD DATA LOCAL INFILE; loading with multi-row INSERT", "errno", errno(err))
			d.loadMode = loadInsert
		default:
			d.loadErr = d.wrap("probe LOAD DATA LOCAL INFILE", err)
		}
	})
	return d.loadMode, d.loadErr
}

// loader is one load connection. Rows of each table collect in their own
// buffer; full buffers stream to the server through the one LOAD DATA
// statement the connection can run at a time, on a goroutine, so that
// generation and the server's work overlap.
type loader struct {
	d       *DB
	c       *sql.Conn
	mode    loadMode
	maxStmt int

	pending [numTables][]byte
	cur     *stream     // the running LOAD DATA, or nil
	free    chan []byte // recycled chunk buffers
	rows    int64
}

var _ dialect.Loader = (*loader)(nil)

// NewLoader opens one load connection with the session settings of a bulk
// load: no unique or foreign key checks (the generator's keys are unique;
// the schema has no foreign keys), and no binary logging when the account
// may turn it off (the load is rebuilt, not replicated).
func (d *DB) NewLoader(ctx context.Context) (dialect.Loader, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, d.wrap("open load connection", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION unique_checks = 0, foreign_key_checks = 0"); err != nil {
		discard(c)
		return nil, d.wrap("set load session", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION sql_log_bin = 0"); err != nil {
		// ER_SPECIFIC_ACCESS_DENIED_ERROR and kin: keep binary logging.
		d.log.Debug("load keeps binary logging: sql_log_bin may not be changed", "errno", errno(err))
	}
	mode, err := d.probeLoadMode(ctx, c)
	if err != nil {
		discard(c)
		return nil, err
	}
	l := &loader{d: d, c: c, mode: mode, maxStmt: insertSize, free: make(chan []byte, 8)}
	if mode == loadInsert {
		var maxPacket int64
		if err := c.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
			discard(c)
			return nil, d.wrap("read max_allowed_packet", err)
		}
		l.maxStmt = int(min(int64(insertSize), maxPacket/2))
	}
	return l, nil
}

func (l *loader) buffer() []byte {
	select {
	case b := <-l.free:
		return b[:0]
	default:
		return make([]byte, 0, chunkSize+4096)
	}
}

// Add encodes r into its table's buffer and ships the buffer when full.
func (l *loader) Add(ctx context.Context, r tpcc.Row) error {
	t := r.Table()
	b := l.pending[t]
	if b == nil {
		b = l.buffer()
	}
	b = r.AppendTSV(b)
	l.pending[t] = b
	l.rows++
	limit := chunkSize
	if l.mode == loadInsert {
		limit = l.maxStmt
	}
	if len(b) >= limit {
		return l.ship(ctx, t)
	}
	return nil
}

// ship sends the pending rows of t to the server.
func (l *loader) ship(ctx context.Context, t tpcc.Table) error {
	b := l.pending[t]
	l.pending[t] = nil
	if len(b) == 0 {
		return nil
	}
	if l.mode == loadInsert {
		err := l.insert(ctx, t, b)
		l.recycle(b)
		return err
	}
	if l.cur != nil && l.cur.table != t {
		if err := l.endStream(); err != nil {
			return err
		}
	}
	if l.cur == nil {
		l.startStream(ctx, t)
	}
	if err := l.cur.send(b); err != nil {
		return l.d.wrap("load "+t.String(), err)
	}
	return nil
}

func (l *loader) recycle(b []byte) {
	select {
	case l.free <- b:
	default:
	}
}

// stream is one running LOAD DATA LOCAL INFILE statement; it reads the
// buffers sent to it until the loader closes it.
type stream struct {
	table  tpcc.Table
	bufs   chan []byte
	done   chan error // the statement's result, sent once
	ended  bool
	err    error
	ctxEnd <-chan struct{}
	ctxErr func() error
	free   func([]byte)

	cur []byte
	off int
}

func (l *loader) startStream(ctx context.Context, t tpcc.Table) {
	s := &stream{
		table:  t,
		bufs:   make(chan []byte, 2),
		done:   make(chan error, 1),
		ctxEnd: ctx.Done(),
		ctxErr: ctx.Err,
		free:   l.recycle,
	}
	name := "oltplab-" + t.String() + "-" + strconv.FormatUint(readerSeq.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return s })
	query := loadDataSQL(t, name)
	go func() {
		_, err := l.c.ExecContext(ctx, query)
		mysql.DeregisterReaderHandler(name)
		s.done <- err
	}()
	l.cur = s
}

// Read is called by the driver on the statement's goroutine.
func (s *stream) Read(p []byte) (int, error) {
	for s.off >= len(s.cur) {
		if s.cur != nil {
			s.free(s.cur)
			s.cur = nil
		}
		select {
		case b, ok := <-s.bufs:
			if !ok {
				return 0, io.EOF
			}
			s.cur, s.off = b, 0
		case <-s.ctxEnd:
			return 0, s.ctxErr()
		}
	}
	n := copy(p, s.cur[s.off:])
	s.off += n
	return n, nil
}

// send hands b to the statement, or reports why the statement ended early.
func (s *stream) send(b []byte) error {
	if s.ended {
		return s.result()
	}
	select {
	case s.bufs <- b:
		return nil
	case err := <-s.done:
		s.ended, s.err = true, err
		return s.result()
	}
}

func (s *stream) result() error {
	if s.err != nil {
		return s.err
	}
	return errors.New("LOAD DATA ended before its input")
}

// endStream closes the input of the running statement and waits for it.
func (l *loader) endStream() error {
	s := l.cur
	l.cur = nil
	if !s.ended {
		close(s.bufs)
		s.err = <-s.done
		s.ended = true
	}
	if s.err != nil {
		return l.d.wrap("load "+s.table.String(), s.err)
	}
	return nil
}

// insert sends the TSV lines of b as one multi-row INSERT.
func (l *loader) insert(ctx context.Context, t tpcc.Table, b []byte) error {
	stmt := appendInsert(make([]byte, 0, len(b)+len(b)/4+256), t, b)
	if _, err := l.c.ExecContext(ctx, string(stmt)); err != nil {
		return l.d.wrap("insert into "+t.String(), err)
	}
	return nil
}

// appendInsert appends "INSERT INTO t (cols) VALUES (...), ..." built from
// the TSV lines of tsv: \N as NULL, every other value quoted (the server
// converts '12.50' to DECIMAL; a bare 0123 would lose the zero of a CHAR
// zip or phone). TSV backslash escapes (\t, \n, \\) mean the same inside a MySQL
// string literal; a quote is doubled.
func appendInsert(dst []byte, t tpcc.Table, tsv []byte) []byte {
	dst = append(dst, "INSERT INTO "...)
	dst = append(dst, t.String()...)
	dst = append(dst, " ("...)
	dst = append(dst, strings.Join(t.Columns(), ", ")...)
	dst = append(dst, ") VALUES "...)
	first := true
	for len(tsv) > 0 {
		line := tsv
		if i := bytes.IndexByte(tsv, '\n'); i >= 0 {
			line, tsv = tsv[:i], tsv[i+1:]
		} else {
			tsv = nil
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '(')
		for j := 0; ; j++ {
			field := line
			i := bytes.IndexByte(line, '\t')
			if i >= 0 {
				field, line = line[:i], line[i+1:]
			}
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendLiteral(dst, field)
			if i < 0 {
				break
			}
		}
		dst = append(dst, ')')
	}
	return dst
}

func appendLiteral(dst, field []byte) []byte {
	if len(field) == 2 && field[0] == '\\' && field[1] == 'N' {
		return append(dst, "NULL"...)
	}
	dst = append(dst, '\'')
	for _, c := range field {
		if c == '\'' {
			dst = append(dst, '\'')
		}
		dst = append(dst, c)
	}
	return append(dst, '\'')
}

// Close ships what is left, waits for the server, and closes the connection.
func (l *loader) Close(ctx context.Context) error {
	err := l.flush(ctx)
	if l.cur != nil {
		// Only after an error: stop the statement by ending its input.
		if e := l.endStream(); err == nil {
			err = e
		}
	}
	if e := discard(l.c); err == nil && e != nil {
		err = l.d.wrap("close load connection", e)
	}
	return err
}

func (l *loader) flush(ctx context.Context) error {
	// The table being streamed first, so its statement need not be restarted.
	if l.cur != nil {
		if err := l.ship(ctx, l.cur.table); err != nil {
			return err
		}
	}
	for _, t := range tpcc.Tables {
		if err := l.ship(ctx, t); err != nil {
			return err
		}
	}
	if l.cur != nil {
		return l.endStream()
	}
	return nil
}

// String describes the loader for logs.
func (l *loader) String() string { return fmt.Sprintf("mysql loader (%s, %d rows)", l.mode, l.rows) }
