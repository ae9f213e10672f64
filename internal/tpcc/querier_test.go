package tpcc

import (
	"fmt"
	"reflect"
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
	for _, tc := range []struct {
		in   string
		null bool
		dest any
		want any // nil: an error is expected
	}{
		{"42", false, &i, int64(42)},
		{"-17", false, &i, int64(-17)},
		{"-9223372036854775808", false, &i, int64(-9223372036854775808)},
		{"9223372036854775808", false, &i, nil},
		{"12a", false, &i, nil},
		{"", false, &i, nil},
		{"-", false, &i, nil},
		{"7", false, &n, 7},
		{"", true, &i, nil},
		{"3.25", false, &f, 3.25},
		{"-0.10", false, &f, -0.1},
		{"1e400", false, &f, nil},
		{"x", false, &f, nil},
		{"", false, &f, nil},
		{"ab  ", false, &s, "ab  "},
		{"", true, &s, nil},
		{"x", true, &a, nil},
		{"17", false, &a, "17"},
		{"", true, &tm, nil},
	} {
		t.Run(fmt.Sprintf("%q null=%v into %T", tc.in, tc.null, tc.dest), func(t *testing.T) {
			ok, err := ScanText([]byte(tc.in), tc.null, tc.dest)
			if !ok {
				t.Fatal("not decoded")
			}
			_, isAny := tc.dest.(*any)
			if tc.want == nil && !isAny {
				if err == nil {
					t.Errorf("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.ValueOf(tc.dest).Elem().Interface(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
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
