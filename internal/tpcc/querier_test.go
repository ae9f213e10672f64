package tpcc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestScanText: a column's text into the Querier's destinations, NULL
// only into *any, and nothing done for a destination it leaves to the
// dialect.
func TestScanText(t *testing.T) {
	var i int64
	var n int
	var f float64
	var s string
	var a any
	var tm time.Time
	cases := []struct {
		in   string
		null bool
		dest any
		want any
		err  string // what the error says; "": no error
	}{
		{"42", false, &i, int64(42), ""},
		{"-17", false, &i, int64(-17), ""},
		{"-9223372036854775808", false, &i, int64(-9223372036854775808), ""},
		{"9223372036854775808", false, &i, nil, "not an integer"},
		{"12a", false, &i, nil, "not an integer"},
		{"", false, &i, nil, "not an integer"},
		{"-", false, &i, nil, "not an integer"},
		{"7", false, &n, 7, ""},
		{"", true, &i, nil, "NULL into *int64"},
		{"3.25", false, &f, 3.25, ""},
		{"-0.10", false, &f, -0.1, ""},
		{"1e400", false, &f, nil, "not a number"},
		{"x", false, &f, nil, "not a number"},
		{"", false, &f, nil, "empty number"},
		{"ab  ", false, &s, "ab  ", ""},
		{"", true, &s, nil, "NULL into *string"},
		{"x", true, &a, nil, ""},
		{"17", false, &a, "17", ""},
		{"", true, &tm, nil, "NULL into *time.Time"},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%q (null %v) into %T", c.in, c.null, c.dest)
		ok, err := ScanText([]byte(c.in), c.null, c.dest)
		switch {
		case !ok:
			t.Errorf("%s: left to the caller", name)
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		default:
			if got := reflect.ValueOf(c.dest).Elem().Interface(); got != c.want {
				t.Errorf("%s: got %#v, want %#v", name, got, c.want)
			}
		}
	}
	if ok, err := ScanText([]byte("1"), false, nil); !ok || err != nil {
		t.Errorf("into a nil destination: %v, %v; want skipped", ok, err)
	}
	var b bool
	for _, dest := range []any{&tm, &b} {
		if ok, err := ScanText([]byte("t"), false, dest); ok || err != nil {
			t.Errorf("into %T: %v, %v; want left to the caller", dest, ok, err)
		}
	}
}
