package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unsafe"
)

// Querier runs SQL on one connection or inside one transaction. SQL text in
// this package uses '?' placeholders; dialects whose drivers want another
// form rewrite it. Scan destinations are *int64, *float64, *string,
// *time.Time and *any (for NULL-able columns); money scans into *float64.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (rowsAffected int64, err error)
	QueryRow(ctx context.Context, sql string, args ...any) RowScanner
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
}

// Deferrer is an optional ability of a Tx: Defer queues a statement whose
// result the transaction does not read (an INSERT, or an UPDATE whose row
// count does not matter) so that it goes to the server together with the
// transaction's next statement or its commit, in one round trip. An error
// of a deferred statement is returned by that next statement or by
// Commit; Rollback discards what is still queued. args must not change
// until then.
type Deferrer interface {
	Defer(sql string, args ...any)
}

// Prefetcher is an optional ability of a Tx: Prefetch queues a read whose
// arguments are already known so that it goes to the server together with
// the other queued statements, in one round trip, when the transaction
// next needs a result. The transaction then reads it with QueryRow or
// Query of the same statement text, exactly once, and in the order of the
// Prefetch calls; a statement that was not prefetched is sent only after
// every prefetched result was read. Rollback discards unread results.
// args must not change until the read is sent.
type Prefetcher interface {
	Prefetch(sql string, args ...any)
}

// RowScanner is the single-row result of QueryRow. Scan returns ErrNoRows
// (wrapped or not) when the query returned no row.
type RowScanner interface {
	Scan(dest ...any) error
}

// Rows is a multi-row result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// ErrNoRows is returned by RowScanner.Scan when there is no row. Dialects
// translate their driver's own value to it.
var ErrNoRows = errors.New("no rows in result set")

// ErrRollback reports the New-Order rollback the specification asks for
// (clause 2.4.2.3: an unused item number). It is an expected outcome, not a
// failure; dialects translate their stored procedures' signal to it.
var ErrRollback = errors.New("new-order rolled back on an unused item number (clause 2.4.2.3)")

// ScanText decodes a column's text form v (null: SQL NULL), as a server
// sends numbers and strings, into dest: *int64, *int, *float64, *string,
// or *any (nil for NULL, else the text); a nil dest skips its column. It
// returns false, having done nothing, for a value into a destination of
// another type, which the caller decodes itself.
func ScanText(v []byte, null bool, dest any) (bool, error) {
	if a, ok := dest.(*any); ok {
		if null {
			*a = nil
		} else {
			*a = string(v)
		}
		return true, nil
	}
	if dest == nil {
		return true, nil
	}
	if null {
		return true, fmt.Errorf("NULL into %T", dest)
	}
	switch d := dest.(type) {
	case *int64:
		x, err := parseInt(v)
		*d = x
		return true, err
	case *int:
		x, err := parseInt(v)
		*d = int(x)
		return true, err
	case *float64:
		if len(v) == 0 {
			return true, errors.New("empty number")
		}
		// ParseFloat keeps no reference to its argument but in an
		// error, which is made from a copy.
		x, err := strconv.ParseFloat(unsafe.String(&v[0], len(v)), 64)
		if err != nil {
			return true, fmt.Errorf("%q: not a number", v)
		}
		*d = x
		return true, nil
	case *string:
		*d = string(v)
		return true, nil
	}
	return false, nil
}

// parseInt parses a decimal integer.
func parseInt(v []byte) (int64, error) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		x, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: not an integer", v)
		}
		return x, nil
	}
	var x int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: not an integer", v)
		}
		x = x*10 + int64(c-'0')
	}
	if neg {
		x = -x
	}
	return x, nil
}
