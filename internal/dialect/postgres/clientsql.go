package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// clientSQLOptions are PostgreSQL's variants of the client-side statements.
// A derived table's parameters need a type: PostgreSQL would take them
// for text.
var clientSQLOptions = tpcc.SQLOptions{ForUpdate: "FOR UPDATE", IntParam: "CAST(? AS INTEGER)"}

// clientSQLStatements are shared by every client-SQL session (read only),
// their placeholders rewritten to $n once.
var clientSQLStatements = tpcc.NewStatements(clientSQLOptions).Map(rewritePlaceholders)

// newClientSQLSession runs the transactions from the client over c
// (dialect.StyleClientSQL), each in a READ COMMITTED transaction, the
// PostgreSQL default that HammerDB also uses.
func newClientSQLSession(c *pgx.Conn) *tpcc.ClientSession {
	// The statements are already in $n form: the session's querier does
	// not rewrite (nil sqls).
	b := &beginner{conn: c}
	return tpcc.NewClientSession(b, clientSQLStatements, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return c.Close(ctx)
	})
}

// pgxQuerier is what *pgx.Conn and pgx.Tx have in common.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// querier adapts a pgx connection or transaction to tpcc.Querier: with a
// non-nil sqls cache it rewrites '?' placeholders to $n (once per distinct
// statement), and it translates pgx.ErrNoRows to tpcc.ErrNoRows. It reuses one row and one
// rows value, so a caller has at most one result open at a time (as
// tpcc's transactions do).
type querier struct {
	q    pgxQuerier
	sqls map[string]string // statement with '?' -> with $n; nil: no rewriting
	row  row
	rows rows
}

func (q *querier) sql(s string) string {
	if q.sqls == nil {
		return s
	}
	if r, ok := q.sqls[s]; ok {
		return r
	}
	r := rewritePlaceholders(s)
	q.sqls[s] = r
	return r
}

func (q *querier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, q.sql(sql), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q *querier) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	q.row.r = q.q.QueryRow(ctx, q.sql(sql), args...)
	return &q.row
}

func (q *querier) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	r, err := q.q.Query(ctx, q.sql(sql), args...)
	if err != nil {
		return nil, err
	}
	q.rows.Rows = r
	return &q.rows, nil
}

type row struct{ r pgx.Row }

func (r *row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	r.r = nil
	if errors.Is(err, pgx.ErrNoRows) {
		return tpcc.ErrNoRows
	}
	return err
}

type rows struct{ pgx.Rows }

func (r *rows) Close() { r.Rows.Close() }

// rewritePlaceholders turns each '?' outside quotes into $1, $2, ...
func rewritePlaceholders(s string) string {
	out := make([]byte, 0, len(s)+16)
	n := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			out = append(out, '$')
			out = strconv.AppendInt(out, int64(n), 10)
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// beginner adapts a *pgx.Conn to tpcc.Beginner. It reuses one transaction
// adapter: a session has one transaction open at a time.
type beginner struct {
	conn *pgx.Conn
	tx   txAdapter
}

// readCommitted is the isolation of client-side transactions.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

func (b *beginner) Begin(ctx context.Context) (tpcc.Tx, error) {
	tx, err := b.conn.BeginTx(ctx, readCommitted)
	if err != nil {
		return nil, err
	}
	b.tx.tx = tx
	b.tx.qs.q = tx
	return &b.tx, nil
}

// txAdapter adapts a pgx.Tx to tpcc.Tx.
type txAdapter struct {
	tx pgx.Tx
	qs querier
}

func (t *txAdapter) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return t.qs.Exec(ctx, sql, args...)
}

func (t *txAdapter) QueryRow(ctx context.Context, sql string, args ...any) tpcc.RowScanner {
	return t.qs.QueryRow(ctx, sql, args...)
}

func (t *txAdapter) Query(ctx context.Context, sql string, args ...any) (tpcc.Rows, error) {
	return t.qs.Query(ctx, sql, args...)
}

func (t *txAdapter) Commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t *txAdapter) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }
