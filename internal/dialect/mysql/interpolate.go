package mysql

import (
	"fmt"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/placeholder"
)

// interpolate appends query to dst with each '?' placeholder outside
// quotes replaced by the SQL literal of the next argument, as the text
// protocol needs: a session sends several statements in one query
// (clientsql.go), which prepared statements cannot do. Arguments: int,
// int64, float64 (the shortest decimal that reads back as the value,
// which a DECIMAL column takes exactly), bool (1 or 0), string and []byte
// (quoted, escaped for the session's sql_mode), time.Time (in UTC, as the
// driver sends it with Loc=UTC) and nil (NULL).
//
// Strings are escaped as the driver's own InterpolateParams does:
// backslash escapes, or, when the session's sql_mode has
// NO_BACKSLASH_ESCAPES, quotes doubled. The connection's character set is
// utf8mb4 (config), in which no byte of a multi-byte character is a quote
// or a backslash.
func interpolate(dst []byte, query string, args []any, noBackslashEscapes bool) ([]byte, error) {
	syn := placeholder.Syntax{Backticks: true, BackslashEscapes: !noBackslashEscapes}
	dst, n, err := placeholder.Expand(dst, query, syn, func(dst []byte, i int) ([]byte, error) {
		if i >= len(args) {
			return dst, fmt.Errorf("%d arguments for more placeholders in %.60q", len(args), query)
		}
		dst, err := appendArg(dst, args[i], noBackslashEscapes)
		if err != nil {
			return dst, fmt.Errorf("argument %d: %w", i+1, err)
		}
		return dst, nil
	})
	if err == nil && n != len(args) {
		err = fmt.Errorf("%d arguments for %d placeholders in %.60q", len(args), n, query)
	}
	return dst, err
}

func appendArg(dst []byte, v any, noBackslashEscapes bool) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		return strconv.AppendFloat(dst, x, 'f', -1, 64), nil
	case bool:
		if x {
			return append(dst, '1'), nil
		}
		return append(dst, '0'), nil
	case string:
		return appendQuoted(dst, x, noBackslashEscapes), nil
	case []byte:
		return appendQuoted(dst, x, noBackslashEscapes), nil
	case time.Time:
		dst = append(dst, '\'')
		dst = x.UTC().AppendFormat(dst, "2006-01-02 15:04:05.999999")
		return append(dst, '\''), nil
	case nil:
		return append(dst, "NULL"...), nil
	}
	return dst, fmt.Errorf("no SQL literal for a %T", v)
}

func appendQuoted[S string | []byte](dst []byte, s S, noBackslashEscapes bool) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if noBackslashEscapes {
			if c == '\'' {
				dst = append(dst, '\'')
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case 0:
			dst = append(dst, '\\', '0')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\x1a':
			dst = append(dst, '\\', 'Z')
		case '\'', '"', '\\':
			dst = append(dst, '\\', c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\'')
}
