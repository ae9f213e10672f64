package placeholder

import "testing"

func TestDollar(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT a FROM t WHERE b = ?", "SELECT a FROM t WHERE b = $1"},
		{"UPDATE t SET a = ?, b = ? WHERE c = ? AND d = ?", "UPDATE t SET a = $1, b = $2 WHERE c = $3 AND d = $4"},
		{"SELECT '?' || ? FROM t", "SELECT '?' || $1 FROM t"},
		{`SELECT "odd?name" FROM t WHERE x = ?`, `SELECT "odd?name" FROM t WHERE x = $1`},
		{"SELECT 'it''s ?' , ?", "SELECT 'it''s ?' , $1"},
		{"VALUES (?,?,?,?,?,?,?,?,?,?,?)", "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := Dollar(c.in); got != c.want {
				t.Errorf("Dollar(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
