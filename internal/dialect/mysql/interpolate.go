package mysql

import (
	"fmt"
	"strconv"
	"time"
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
	next := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote != '`' && !noBackslashEscapes && i+1 < len(query) {
				dst = append(dst, c)
				i++
				c = query[i]
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '?':
			if next >= len(args) {
				return dst, fmt.Errorf("%d arguments for more placeholders in %.60q", len(args), query)
			}
			var err error
			if dst, err = appendArg(dst, args[next], noBackslashEscapes); err != nil {
				return dst, fmt.Errorf("argument %d: %w", next+1, err)
			}
			next++
			continue
		}
		dst = append(dst, c)
	}
	if next != len(args) {
		return dst, fmt.Errorf("%d arguments for %d placeholders in %.60q", len(args), next, query)
	}
	return dst, nil
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
