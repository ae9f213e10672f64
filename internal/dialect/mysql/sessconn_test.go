package mysql

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestScanValues: the driver's values (typed, or text for DECIMAL and
// strings) into a session's scan destinations.
func TestScanValues(t *testing.T) {
	var i int64
	var n int
	var f float64
	var s string
	var tm time.Time
	var b bool
	var a any
	when := time.Date(2026, 11, 27, 6, 5, 4, 0, time.UTC)
	for _, tc := range []struct {
		v    driver.Value
		dest any
		want any // nil: an error is expected
	}{
		{int64(42), &i, int64(42)},
		{uint64(7), &i, int64(7)},
		{uint64(1 << 63), &i, nil},
		{[]byte("-12"), &i, int64(-12)},
		{[]byte("1.5"), &i, nil},
		{3.5, &i, nil},
		{int64(9), &n, 9},
		{[]byte("123.45"), &f, 123.45},
		{float32(0.5), &f, 0.5},
		{int64(3), &f, 3.0},
		{when, &f, nil},
		{[]byte("ab"), &s, "ab"},
		{"cd", &s, "cd"},
		{int64(1), &s, nil},
		{when, &tm, when},
		{[]byte("2026-11-27"), &tm, nil},
		{int64(1), &b, true},
		{[]byte("0"), &b, false},
		{nil, &i, nil},
		{nil, &a, nil},
		{[]byte("x"), &a, "x"},
		{int64(5), &a, int64(5)},
	} {
		t.Run(fmt.Sprintf("%T %v into %T", tc.v, tc.v, tc.dest), func(t *testing.T) {
			err := scanValues([]driver.Value{tc.v}, []any{tc.dest})
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
	// A nil destination skips its column, whatever the value.
	if err := scanValues([]driver.Value{int64(1), []byte("x"), nil}, []any{nil, nil, nil}); err != nil {
		t.Errorf("nil destinations: %v", err)
	}
	if err := scanValues([]driver.Value{int64(1)}, []any{&i, &i}); err == nil {
		t.Error("1 value into 2 destinations: no error")
	}
}
