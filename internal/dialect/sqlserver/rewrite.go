package sqlserver

import (
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/placeholder"
)

// tsql rewrites oltplab's portable SQL (package tpcc, the consistency
// checks, the tests) into T-SQL: every '?' outside quotes becomes @p1,
// @p2, ... (go-mssqldb sends the arguments as sp_executesql's numbered
// parameters), and a SELECT that ends in "LIMIT n" selects TOP (n)
// instead, which SQL Server 2008 has (OFFSET ... FETCH came in 2012).
func tsql(q string) string {
	if n, rest, ok := cutLimit(q); ok {
		q = "SELECT TOP (" + strconv.Itoa(n) + ") " + rest
	}
	if !strings.Contains(q, "?") {
		return q
	}
	out, _, _ := placeholder.Expand(make([]byte, 0, len(q)+32), q, placeholder.Syntax{}, func(dst []byte, i int) ([]byte, error) {
		return strconv.AppendInt(append(dst, "@p"...), int64(i+1), 10), nil
	})
	return string(out)
}

// cutLimit splits "SELECT rest LIMIT n" into n and rest (what follows
// SELECT, without the LIMIT); ok is false for any other statement.
func cutLimit(q string) (n int, rest string, ok bool) {
	const sel = "SELECT "
	if len(q) < len(sel) || !strings.EqualFold(q[:len(sel)], sel) {
		return 0, "", false
	}
	i := strings.LastIndex(strings.ToUpper(q), " LIMIT ")
	if i < 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(strings.TrimSpace(q[i+len(" LIMIT "):]))
	if err != nil || n < 0 {
		return 0, "", false
	}
	rest = q[len(sel):i]
	if strings.HasPrefix(strings.ToUpper(rest), "DISTINCT ") {
		// SELECT DISTINCT TOP (n) ...
		return 0, "", false
	}
	return n, rest, true
}

// args converts the arguments oltplab passes (int64, float64, string,
// time.Time, nil) into the parameter types the schema's columns have, so
// that SQL Server compares like with like: strings as VARCHAR (an
// NVARCHAR parameter against a VARCHAR column converts the column, which
// can turn an index seek into a scan) and times as DATETIME (go-mssqldb
// sends a time.Time as DATETIMEOFFSET otherwise). args is converted in
// place and returned.
func args(a []any) []any {
	for i, v := range a {
		switch x := v.(type) {
		case string:
			a[i] = mssql.VarChar(x)
		case time.Time:
			a[i] = mssql.DateTime1(x)
		case int:
			a[i] = int64(x)
		}
	}
	return a
}
