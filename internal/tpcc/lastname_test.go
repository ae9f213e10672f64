package tpcc

import (
	"fmt"
	"testing"
)

func TestLastName(t *testing.T) {
	tests := []struct {
		num  int
		want string
	}{
		{371, "PRICALLYOUGHT"}, // the example of TPC-C 4.3.2.3
		{0, "BARBARBAR"},
		{999, "EINGEINGEING"},
		{40, "BARPRESBAR"},
		{258, "ABLEESEATION"},
		{106, "OUGHTBARANTI"},
		{1371, "PRICALLYOUGHT"}, // reduced modulo 1000
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.num), func(t *testing.T) {
			if got := LastName(tt.num); got != tt.want {
				t.Errorf("LastName(%d) = %q, want %q", tt.num, got, tt.want)
			}
			if got := string(AppendLastName([]byte("x"), tt.num)); got != "x"+tt.want {
				t.Errorf("AppendLastName(%d) = %q, want %q", tt.num, got, "x"+tt.want)
			}
		})
	}
}

func TestLastNamesDistinct(t *testing.T) {
	seen := map[string]int{}
	for n := range 1000 {
		name := LastName(n)
		if prev, ok := seen[name]; ok {
			t.Fatalf("LastName(%d) = LastName(%d) = %q", n, prev, name)
		}
		seen[name] = n
		if len(name) > 16 {
			t.Errorf("LastName(%d) = %q longer than C_LAST's 16 characters", n, name)
		}
	}
}
