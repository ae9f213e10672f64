package mysql

import (
	"database/sql/driver"
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
	cases := []struct {
		v     driver.Value
		dest  any
		want  any
		fails bool
	}{
		{int64(42), &i, int64(42), false},
		{uint64(7), &i, int64(7), false},
		{uint64(1 << 63), &i, nil, true},
		{[]byte("-12"), &i, int64(-12), false},
		{[]byte("1.5"), &i, nil, true},
		{3.5, &i, nil, true},
		{int64(9), &n, 9, false},
		{[]byte("123.45"), &f, 123.45, false},
		{float32(0.5), &f, 0.5, false},
		{int64(3), &f, 3.0, false},
		{when, &f, nil, true},
		{[]byte("ab"), &s, "ab", false},
		{"cd", &s, "cd", false},
		{int64(1), &s, nil, true},
		{when, &tm, when, false},
		{[]byte("2026-11-27"), &tm, nil, true},
		{int64(1), &b, true, false},
		{[]byte("0"), &b, false, false},
		{nil, &i, nil, true},
		{nil, &a, nil, false},
		{[]byte("x"), &a, "x", false},
		{int64(5), &a, int64(5), false},
	}
	for _, c := range cases {
		err := scanValues([]driver.Value{c.v}, []any{c.dest})
		got := reflect.ValueOf(c.dest).Elem().Interface()
		if c.fails != (err != nil) || !c.fails && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T %v into %T: got %#v, %v; want %#v (an error: %v)", c.v, c.v, c.dest, got, err, c.want, c.fails)
		}
	}
	// A nil destination skips its column, whatever the value.
	if err := scanValues([]driver.Value{int64(1), []byte("x"), nil}, []any{nil, nil, nil}); err != nil {
		t.Errorf("nil destinations: %v", err)
	}
	if err := scanValues([]driver.Value{int64(1)}, []any{&i, &i}); err == nil {
		t.Error("1 value into 2 destinations: no error")
	}
}
