// Package placeholder rewrites the '?' parameter placeholders that oltplab
// writes its SQL with into the numbered form ($1, $2, ...) PostgreSQL
// wants. Both the results store's PostgreSQL backend and the PostgreSQL
// dialect's client-side statements use it. It imports nothing of oltplab.
package placeholder

import (
	"strconv"
	"strings"
)

// Dollar numbers the '?' placeholders of q as $1, $2, ..., leaving string
// literals and quoted identifiers alone. q without '?' is returned as is.
func Dollar(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	out := make([]byte, 0, len(q)+16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
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
