package mysql

import (
	"testing"
	"time"
)

func TestInterpolate(t *testing.T) {
	at := time.Date(2026, 11, 27, 7, 8, 9, 123_000, time.FixedZone("east", 3600))
	for _, tc := range []struct {
		name   string
		query  string
		args   []any
		noBSE  bool // NO_BACKSLASH_ESCAPES
		want   string
		wantOK bool
	}{
		{"numbers", "SELECT ? + ?, ?", []any{int64(-3), 7, 12.5}, false, "SELECT -3 + 7, 12.5", true},
		{"no exponent", "SELECT ?", []any{0.00001}, false, "SELECT 0.00001", true},
		{"bool and null", "UPDATE t SET a = ?, b = ?, c = ?", []any{true, false, nil}, false, "UPDATE t SET a = 1, b = 0, c = NULL", true},
		{"string escaped", "SELECT ?", []any{"O'Brien \\ \"x\"\n\x00\x1a"}, false, `SELECT 'O\'Brien \\ \"x\"\n\0\Z'`, true},
		{"string, quotes doubled", "SELECT ?", []any{"O'Brien \\"}, true, `SELECT 'O''Brien \'`, true},
		{"bytes", "SELECT ?", []any{[]byte("1,2,3")}, false, "SELECT '1,2,3'", true},
		{"time in UTC", "SELECT ?", []any{at}, false, "SELECT '2026-11-27 06:08:09.000123'", true},
		{"placeholders in quotes stay", "SELECT '?', \"?\", `?`, ?", []any{int64(1)}, false, "SELECT '?', \"?\", `?`, 1", true},
		{"escaped quote in a literal", `SELECT 'a\'?', ?`, []any{int64(2)}, false, `SELECT 'a\'?', 2`, true},
		{"too few arguments", "SELECT ?, ?", []any{int64(1)}, false, "", false},
		{"too many arguments", "SELECT ?", []any{int64(1), int64(2)}, false, "", false},
		{"no literal", "SELECT ?", []any{struct{}{}}, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := interpolate(nil, tc.query, tc.args, tc.noBSE)
			if !tc.wantOK {
				if err == nil {
					t.Fatalf("no error; got %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
