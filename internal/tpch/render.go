package tpch

import (
	"fmt"
	"strconv"
	"strings"
)

// Unit is a unit of date arithmetic.
type Unit int

const (
	Day Unit = iota
	Month
	Year
)

func (u Unit) String() string {
	switch u {
	case Day:
		return "day"
	case Month:
		return "month"
	case Year:
		return "year"
	}
	return "unit?"
}

// Flavor writes the constructs of the query texts that SQL products
// write differently (clause 2.2.3.3). Dialect packages supply one; the
// query texts are otherwise the same for every product.
type Flavor interface {
	// Date is the literal of a date given as YYYY-MM-DD.
	Date(iso string) string
	// DateAdd is the date iso moved by n units (n may be negative): the
	// specification's date 'iso' + interval 'n' unit.
	DateAdd(iso string, n int, u Unit) string
	// Year is the year of a date expression: extract(year from expr).
	Year(expr string) string
	// Substring is length characters of expr from position from (1-based).
	Substring(expr string, from, length int) string
	// Decimal is a constant decimal expression such as "0.06 - 0.01",
	// evaluated exactly to the cent.
	Decimal(expr string) string
	// Limit is the clause that ends a query to keep its first n rows.
	Limit(n int) string
}

// StandardSQL is the flavor of the specification's own syntax: SQL-92
// date literals and interval arithmetic, extract and substring, plus a
// LIMIT clause. PostgreSQL and MySQL/MariaDB take it as it is.
type StandardSQL struct{}

var _ Flavor = StandardSQL{}

func (StandardSQL) Date(iso string) string { return "date '" + iso + "'" }

func (StandardSQL) DateAdd(iso string, n int, u Unit) string {
	op := "+"
	if n < 0 {
		op, n = "-", -n
	}
	return fmt.Sprintf("date '%s' %s interval '%d' %s", iso, op, n, u)
}

func (StandardSQL) Year(expr string) string { return "extract(year from " + expr + ")" }

func (StandardSQL) Substring(expr string, from, length int) string {
	return fmt.Sprintf("substring(%s from %d for %d)", expr, from, length)
}

func (StandardSQL) Decimal(expr string) string { return expr }

func (StandardSQL) Limit(n int) string { return "limit " + strconv.Itoa(n) }

// Query is one query ready to run: the statements before it (Q15 creates
// its view), the statement whose rows are the answer, and the statements
// after it (Q15 drops the view).
type Query struct {
	Number   int
	Setup    []string
	Text     string
	Teardown []string
}

// Render writes query p.Query with its parameters in flavor f, for query
// stream stream (which names Q15's view).
func (p Params) Render(f Flavor, stream int) (Query, error) {
	if p.Query < 1 || p.Query > Queries {
		return Query{}, fmt.Errorf("render query %d: want 1..%d", p.Query, Queries)
	}
	text, err := render(queryTexts[p.Query-1], p.Values, f, stream)
	if err != nil {
		return Query{}, fmt.Errorf("render query %d: %w", p.Query, err)
	}
	stmts := strings.Split(text, ";\n")
	for i := range stmts {
		stmts[i] = strings.TrimSpace(stmts[i])
	}
	q := Query{Number: p.Query}
	switch len(stmts) {
	case 1:
		q.Text = stmts[0]
	case 3:
		q.Setup, q.Text, q.Teardown = stmts[:1], stmts[1], stmts[2:]
	default:
		return Query{}, fmt.Errorf("render query %d: %d statements", p.Query, len(stmts))
	}
	return q, nil
}

// render expands the macros and parameters of a query text.
func render(tmpl string, vals []string, f Flavor, stream int) (string, error) {
	var b strings.Builder
	param := func(s string) (string, error) {
		if len(s) < 2 || s[0] != ':' {
			return s, nil
		}
		n, err := strconv.Atoi(s[1:])
		if err != nil || n < 1 || n > len(vals) {
			return "", fmt.Errorf("parameter %s: the query has %d", s, len(vals))
		}
		return vals[n-1], nil
	}
	for i := 0; i < len(tmpl); {
		switch {
		case strings.HasPrefix(tmpl[i:], "[["):
			end := strings.Index(tmpl[i:], "]]")
			if end < 0 {
				return "", fmt.Errorf("unterminated macro at %d", i)
			}
			fields := strings.Fields(tmpl[i+2 : i+end])
			for k := 1; k < len(fields); k++ {
				v, err := param(fields[k])
				if err != nil {
					return "", err
				}
				fields[k] = v
			}
			out, err := expand(fields, f, stream)
			if err != nil {
				return "", err
			}
			b.WriteString(out)
			i += end + 2
		case tmpl[i] == ':' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9':
			j := i + 1
			for j < len(tmpl) && tmpl[j] >= '0' && tmpl[j] <= '9' {
				j++
			}
			v, err := param(tmpl[i:j])
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = j
		default:
			b.WriteByte(tmpl[i])
			i++
		}
	}
	return b.String(), nil
}

var units = map[string]Unit{"day": Day, "month": Month, "year": Year}

func expand(fields []string, f Flavor, stream int) (string, error) {
	bad := fmt.Errorf("macro [[%s]]", strings.Join(fields, " "))
	if len(fields) == 0 {
		return "", bad
	}
	switch fields[0] {
	case "date":
		switch len(fields) {
		case 2:
			return f.Date(fields[1]), nil
		case 5:
			n, err := strconv.Atoi(fields[3])
			u, ok := units[fields[4]]
			if err != nil || !ok || (fields[2] != "+" && fields[2] != "-") {
				return "", bad
			}
			if fields[2] == "-" {
				n = -n
			}
			return f.DateAdd(fields[1], n, u), nil
		}
	case "year":
		if len(fields) == 2 {
			return f.Year(fields[1]), nil
		}
	case "substring":
		if len(fields) == 4 {
			from, err1 := strconv.Atoi(fields[2])
			n, err2 := strconv.Atoi(fields[3])
			if err1 == nil && err2 == nil {
				return f.Substring(fields[1], from, n), nil
			}
		}
	case "decimal":
		if len(fields) > 1 {
			return f.Decimal(strings.Join(fields[1:], " ")), nil
		}
	case "limit":
		if n, err := strconv.Atoi(fields[len(fields)-1]); err == nil && len(fields) == 2 {
			return f.Limit(n), nil
		}
	case "stream":
		if len(fields) == 1 {
			return strconv.Itoa(stream), nil
		}
	}
	return "", bad
}
