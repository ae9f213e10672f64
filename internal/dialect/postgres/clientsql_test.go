package postgres

import (
	"testing"

	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestRewritePlaceholders(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT a FROM t WHERE b = ?", "SELECT a FROM t WHERE b = $1"},
		{"UPDATE t SET a = ?, b = ? WHERE c = ? AND d = ?", "UPDATE t SET a = $1, b = $2 WHERE c = $3 AND d = $4"},
		{"SELECT '?' || ? FROM t", "SELECT '?' || $1 FROM t"},
		{`SELECT "odd?name" FROM t WHERE x = ?`, `SELECT "odd?name" FROM t WHERE x = $1`},
		{"VALUES (?,?,?,?,?,?,?,?,?,?,?)", "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := rewritePlaceholders(c.in); got != c.want {
				t.Errorf("rewritePlaceholders(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestClientStatementsHaveNoQuestionMarks(t *testing.T) {
	for _, s := range clientSQLStatements.All() {
		if rewritePlaceholders(s) != s {
			t.Errorf("statement still has '?' placeholders: %q", s)
		}
	}
}

func TestDDL(t *testing.T) {
	cases := []struct {
		table string
		want  string
	}{
		{"item", "CREATE TABLE item (i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price NUMERIC(5,2), " +
			"i_data VARCHAR(50)) WITH (autovacuum_enabled = off)"},
		{"new_order", "CREATE TABLE new_order (no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL) " +
			"WITH (autovacuum_enabled = off)"},
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			for _, tb := range tpcc.Tables {
				if tb.String() == c.table {
					if got := createTableSQL(tb); got != c.want {
						t.Errorf("createTableSQL(%s) =\n%s\nwant\n%s", c.table, got, c.want)
					}
					return
				}
			}
			t.Fatalf("no table %s", c.table)
		})
	}
	for _, tb := range tpcc.Tables {
		if got, want := len(columnTypes[tb]), len(tb.Columns()); got != want {
			t.Errorf("%s: %d column types for %d columns", tb, got, want)
		}
	}
	if got := len(tpcc.Tables); got != numTables {
		t.Errorf("numTables = %d, tpcc.Tables has %d", numTables, got)
	}
}
