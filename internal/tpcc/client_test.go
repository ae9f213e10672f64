package tpcc

import (
	"fmt"
	"strings"
	"testing"
)

// TestMiddleOf: the customer at position ceil(n/2), 1-based (2.5.2.2).
func TestMiddleOf(t *testing.T) {
	cases := []struct{ n, want int }{{1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {6, 2}, {7, 3}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d", c.n), func(t *testing.T) {
			if got := middleOf(c.n); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestAppendAmount(t *testing.T) {
	cases := []struct {
		m    Money
		want string
	}{{0, "0.00"}, {5, "0.05"}, {100, "1.00"}, {123456, "1234.56"}, {500000, "5000.00"}, {-1005, "-10.05"}}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := string(appendAmount(nil, c.m)); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestAppendCData: the payment's history goes at the left of C_DATA and the
// result never exceeds 500 characters (2.5.2.2).
func TestAppendCData(t *testing.T) {
	long := strings.Repeat("x", 500)
	cases := []struct {
		name string
		old  string
		want string
	}{
		{"short", "abc", "7 3 2 4 1 12.05 abc"},
		{"empty", "", "7 3 2 4 1 12.05 "},
		{"truncated", long, ("7 3 2 4 1 12.05 " + long)[:500]},
		// 17 ASCII bytes then 2-byte runes: byte 500 is inside a rune, so the cut is at 499.
		{"multibyte cut", "a" + strings.Repeat("é", 250), ("7 3 2 4 1 12.05 a" + strings.Repeat("é", 250))[:499]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(appendCData(nil, 7, 3, 2, 4, 1, 1205, c.old))
			if got != c.want {
				t.Errorf("got %q (len %d), want %q (len %d)", got, len(got), c.want, len(c.want))
			}
			if len(got) > maxCData {
				t.Errorf("len: got %d, want <= %d", len(got), maxCData)
			}
		})
	}
}

func TestMoneyFromDB(t *testing.T) {
	cases := []struct {
		x    float64
		want Money
	}{{0, 0}, {0.1 + 0.2, 30}, {12.345000001, 1235}, {-10, -1000}, {99.99, 9999}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.x), func(t *testing.T) {
			if got := moneyFromDB(c.x); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
