package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

var _ dialect.TPCH = (*Database)(nil)

// TPCHFlavor: PostgreSQL takes the specification's own syntax.
func (d *Database) TPCHFlavor() tpch.Flavor { return tpch.StandardSQL{} }

// tpchType is the PostgreSQL type of a TPC-H column (clause 1.3.1).
// Text sorts and compares byte by byte (COLLATE "C"), as the reference
// answers do, whatever the database's locale.
func tpchType(c tpch.Column) string {
	switch c.Type {
	case tpch.Identifier:
		if c.Wide {
			return "BIGINT"
		}
		return "INTEGER"
	case tpch.Integer:
		return "INTEGER"
	case tpch.Decimal:
		return "NUMERIC(15,2)"
	case tpch.FixedText:
		return fmt.Sprintf(`CHAR(%d) COLLATE "C"`, c.Length)
	case tpch.VarText:
		return fmt.Sprintf(`VARCHAR(%d) COLLATE "C"`, c.Length)
	case tpch.Date:
		return "DATE"
	}
	return "TEXT"
}

func createTPCHTableSQL(t tpch.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.String() + " (")
	for i, c := range t.Columns() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + tpchType(c) + " NOT NULL")
	}
	// As for TPC-C: no autovacuum until AnalyzeTPCH, the build's last step.
	b.WriteString(") WITH (autovacuum_enabled = off)")
	return b.String()
}

// tpchMetaSQL creates the table that marks the TPC-H schema as oltplab's.
const tpchMetaSQL = "CREATE TABLE " + tpch.MetaTable + ` (k VARCHAR(64) COLLATE "C" PRIMARY KEY, v VARCHAR(256) COLLATE "C" NOT NULL)`

// CreateTPCHTables creates the metadata table and the eight tables
// without keys, in one transaction.
func (d *Database) CreateTPCHTables(ctx context.Context) error {
	return d.admin(ctx, "CREATE TABLE", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		b.Queue(tpchMetaSQL)
		for _, t := range tpch.Tables {
			b.Queue(createTPCHTableSQL(t))
		}
		return c.SendBatch(ctx, &b).Close()
	})
}

// DropTPCHSchema drops the eight tables, then the metadata table.
func (d *Database) DropTPCHSchema(ctx context.Context) error {
	return d.admin(ctx, "DROP", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		for _, t := range tpch.Tables {
			b.Queue("DROP TABLE IF EXISTS " + t.String())
		}
		b.Queue("DROP TABLE IF EXISTS " + tpch.MetaTable)
		return c.SendBatch(ctx, &b).Close()
	})
}

// tpchBySize lists the tables largest first, for index and ANALYZE workers.
var tpchBySize = []tpch.Table{tpch.LineItem, tpch.Orders, tpch.PartSupp, tpch.Part, tpch.Customer,
	tpch.Supplier, tpch.Nation, tpch.Region}

// CreateTPCHIndexes builds each primary key as a unique index, then the
// foreign-key indexes, a few at a time, and attaches the unique indexes
// as primary keys (no scan: the columns are NOT NULL).
func (d *Database) CreateTPCHIndexes(ctx context.Context) error {
	var builds, attach []string
	for _, t := range tpchBySize {
		name := t.String()
		builds = append(builds, fmt.Sprintf("CREATE UNIQUE INDEX %s_pkey ON %s (%s)", name, name, strings.Join(t.PrimaryKey(), ", ")))
		attach = append(attach, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_pkey PRIMARY KEY USING INDEX %s_pkey", name, name, name))
	}
	for _, fk := range tpch.ForeignKeys {
		if fk.CoveredByPrimaryKey() {
			continue
		}
		builds = append(builds, fmt.Sprintf("CREATE INDEX %s_%s_idx ON %s (%s)", fk.Table, strings.Join(fk.Columns, "_"),
			fk.Table, strings.Join(fk.Columns, ", ")))
	}
	next := make(chan string, len(builds))
	for _, s := range builds {
		next <- s
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range indexWorkers {
		g.Go(func() error {
			return d.admin(gctx, "CREATE INDEX", func(c *pgx.Conn) error {
				if _, err := c.Exec(gctx, indexBuildSettings); err != nil {
					return fmt.Errorf("set index build settings: %w", err)
				}
				for s := range next {
					if _, err := c.Exec(gctx, s); err != nil {
						return fmt.Errorf("%s: %w", s, err)
					}
				}
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return d.admin(ctx, "ADD PRIMARY KEY", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		for _, s := range attach {
			b.Queue(s)
		}
		return c.SendBatch(ctx, &b).Close()
	})
}

// AnalyzeTPCH analyzes the eight tables and gives them back to autovacuum.
func (d *Database) AnalyzeTPCH(ctx context.Context) error {
	next := make(chan string, len(tpchBySize))
	for _, t := range tpchBySize {
		next <- t.String()
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range indexWorkers {
		g.Go(func() error {
			return d.admin(gctx, "ANALYZE", func(c *pgx.Conn) error {
				for t := range next {
					if _, err := c.Exec(gctx, "ANALYZE "+t); err != nil {
						return fmt.Errorf("analyze %s: %w", t, err)
					}
					if _, err := c.Exec(gctx, "ALTER TABLE "+t+" RESET (autovacuum_enabled)"); err != nil {
						return fmt.Errorf("turn autovacuum back on for %s: %w", t, err)
					}
				}
				return nil
			})
		})
	}
	return g.Wait()
}

// tpchCopySize is the size of the buffers a TPC-H loader streams to COPY.
const tpchCopySize = 256 << 10

// tpchCopySQL is the COPY statement of each table: dbgen's flat-file
// text (tpch.Row.AppendTBL) read as COPY text with '|' between values.
var tpchCopySQL = func() (s [tpch.TableCount]string) {
	for _, t := range tpch.Tables {
		s[t] = "COPY " + t.String() + " (" + strings.Join(t.ColumnNames(), ", ") + ") FROM STDIN WITH (FORMAT text, DELIMITER '|')"
	}
	return s
}()

// tpchLoader streams each table's rows through a COPY of its own, on a
// connection of its own opened at the table's first row: a chunk of
// ORDERS interleaves orders and their line items, and two COPYs running
// side by side take both without ever restarting a statement.
type tpchLoader struct {
	d       *Database
	streams [tpch.TableCount]*copyStream
}

// copyStream is one table's running COPY.
type copyStream struct {
	table tpch.Table
	conn  *pgx.Conn
	pipe  *dialect.Pipe
	buf   []byte
	done  chan error // the COPY's result

	finished bool
	err      error
}

// NewTPCHLoader opens a loader; its connections open as tables arrive.
func (d *Database) NewTPCHLoader(ctx context.Context) (dialect.TPCHLoader, error) {
	return &tpchLoader{d: d}, nil
}

func (l *tpchLoader) stream(ctx context.Context, t tpch.Table) (*copyStream, error) {
	if s := l.streams[t]; s != nil {
		return s, nil
	}
	c, err := l.d.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("open load connection for %s: %w", t, err)
	}
	if _, err := c.Exec(ctx, loadSettings); err != nil {
		_ = c.Close(context.WithoutCancel(ctx))
		return nil, &dialect.Error{Class: classify(err), Op: "set load session settings", Err: err}
	}
	s := &copyStream{table: t, conn: c, pipe: dialect.NewPipe(ctx, 4), done: make(chan error, 1)}
	s.buf = s.pipe.Buffer(tpchCopySize)
	go func() {
		_, err := c.PgConn().CopyFrom(ctx, s.pipe, tpchCopySQL[t])
		s.pipe.End()
		s.done <- err
	}()
	l.streams[t] = s
	return s, nil
}

// Add appends the row's text to its table's buffer and sends full buffers.
func (l *tpchLoader) Add(ctx context.Context, r tpch.Row) error {
	s, err := l.stream(ctx, r.Table())
	if err != nil {
		return err
	}
	s.buf = r.AppendTBL(s.buf)
	if len(s.buf) >= tpchCopySize-1024 {
		return s.send()
	}
	return nil
}

func (s *copyStream) send() error {
	if err := s.pipe.Send(s.buf); err != nil {
		return s.finish()
	}
	s.buf = s.pipe.Buffer(tpchCopySize)
	return nil
}

// finish ends the COPY's input, waits for its result, makes it durable
// and closes the connection. Later calls return the same result.
func (s *copyStream) finish() error {
	if s.finished {
		return s.err
	}
	s.finished = true
	var err error
	select {
	case err = <-s.done:
		// The COPY ended before its input did: its error says why.
		if err == nil {
			err = dialect.ErrPipeEnded
		}
	default:
		if len(s.buf) > 0 {
			_ = s.pipe.Send(s.buf)
		}
		s.pipe.CloseInput()
		err = <-s.done
	}
	ctx := context.Background()
	if err == nil {
		// One synchronous commit flushes the WAL of the COPY before it.
		err = syncCommits(ctx, s.conn)
	}
	if cerr := s.conn.Close(ctx); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		s.err = &dialect.Error{Class: classify(err), Op: "load " + s.table.String(), Err: err}
	}
	return s.err
}

// Close ends every table's COPY and returns the first failure.
func (l *tpchLoader) Close(ctx context.Context) error {
	var first error
	for _, s := range l.streams {
		if s == nil {
			continue
		}
		if err := s.finish(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// tpchSession is one query stream's connection.
type tpchSession struct {
	c *pgx.Conn
}

// tpchCancelGrace is how long a canceled query has to stop after the
// server was asked to cancel it before its connection is given up.
const tpchCancelGrace = 10 * time.Second

// NewTPCHSession opens a connection for one query stream. When a
// statement's context ends, the server is asked to cancel it (a cancel
// request on a connection of its own, as psql's Ctrl-C): the query
// stops on the server, and the session goes on with the next one. Only a
// server that does not answer within tpchCancelGrace loses the
// connection.
func (d *Database) NewTPCHSession(ctx context.Context) (dialect.TPCHSession, error) {
	cfg := d.cfg.Copy()
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: tpchCancelGrace}
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "connect to " + d.target, Err: connectCause(d.cfg, err)}
	}
	return &tpchSession{c: c}, nil
}

// ExecTx runs stmts in one transaction with the simple protocol.
func (s *tpchSession) ExecTx(ctx context.Context, stmts []string) ([]int64, error) {
	tx, err := s.c.Begin(ctx)
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "begin", Err: err}
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows := make([]int64, len(stmts))
	for i, st := range stmts {
		tag, err := tx.Exec(ctx, st, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return nil, &dialect.Error{Class: classify(err), Op: fmt.Sprintf("statement %d of %d", i+1, len(stmts)), Err: err}
		}
		rows[i] = tag.RowsAffected()
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "commit", Err: err}
	}
	return rows, nil
}

func (s *tpchSession) Exec(ctx context.Context, sql string) error {
	if _, err := s.c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return &dialect.Error{Class: classify(err), Op: "run statement", Err: err}
	}
	return nil
}

// Query runs sql with the simple protocol, whose results come as text.
func (s *tpchSession) Query(ctx context.Context, sql string) ([][]string, error) {
	results, err := s.c.PgConn().Exec(ctx, sql).ReadAll()
	if err == nil && len(results) != 1 {
		err = fmt.Errorf("%d results, want 1", len(results))
	}
	if err != nil {
		return nil, &dialect.Error{Class: classify(err), Op: "run query", Err: err}
	}
	rows := make([][]string, len(results[0].Rows))
	for i, r := range results[0].Rows {
		row := make([]string, len(r))
		for j, v := range r {
			if v == nil {
				row[j] = "NULL"
			} else {
				row[j] = string(v)
			}
		}
		rows[i] = row
	}
	return rows, nil
}

func (s *tpchSession) Close() error { return s.c.Close(context.Background()) }
