// Package placeholder finds the '?' parameter placeholders that oltplab
// writes its SQL with, outside string literals and quoted identifiers, and
// replaces them: with the numbered form ($1, $2, ...) PostgreSQL wants
// (Dollar: the results store's PostgreSQL backend and the PostgreSQL
// dialect's client-side statements), or with whatever a caller appends
// (Expand: the MySQL dialect writes its arguments there as literals). It
// imports nothing of oltplab.
package placeholder

import (
	"strconv"
	"strings"
)

// Syntax is how a dialect quotes: '...' and "..." always, `...` with
// Backticks; with BackslashEscapes a backslash inside '...' or "..."
// escapes the next character (MySQL without NO_BACKSLASH_ESCAPES).
type Syntax struct {
	Backticks, BackslashEscapes bool
}

// Expand appends q to dst with its i-th '?' outside quotes (from 0)
// replaced by what arg appends; it returns the placeholders found, or
// arg's first error.
func Expand(dst []byte, q string, syn Syntax, arg func(dst []byte, i int) ([]byte, error)) ([]byte, int, error) {
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote != '`' && syn.BackslashEscapes && i+1 < len(q) {
				dst = append(dst, c)
				i++
				c = q[i]
			}
		case c == '\'' || c == '"' || (c == '`' && syn.Backticks):
			quote = c
		case c == '?':
			var err error
			if dst, err = arg(dst, n); err != nil {
				return dst, n, err
			}
			n++
			continue
		}
		dst = append(dst, c)
	}
	return dst, n, nil
}

// Dollar numbers the '?' placeholders of q as $1, $2, ..., leaving string
// literals and quoted identifiers alone. q without '?' is returned as is.
func Dollar(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	out, _, _ := Expand(make([]byte, 0, len(q)+16), q, Syntax{}, func(dst []byte, i int) ([]byte, error) {
		return strconv.AppendInt(append(dst, '$'), int64(i+1), 10), nil
	})
	return string(out)
}
