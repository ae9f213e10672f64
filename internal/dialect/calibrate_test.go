package dialect_test

import (
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

// naiveCalibration is the loop as its comment states it, with real string
// appends and cuts: the ring buffer of CalibrationWork must agree.
func naiveCalibration(n int64) (int64, string) {
	var x int64
	s := ""
	for i := int64(1); i <= n; i++ {
		x = (x*31 + i) % 1000003
		s += string(rune('A' + x%26))
		if len(s) > 16 {
			s = s[len(s)-16:]
		}
	}
	return x, s
}

func TestCalibrationWork(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 15, 16, 17, 31, 1000, 123457} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			gx, gs := dialect.CalibrationWork(n)
			wx, ws := naiveCalibration(n)
			if gx != wx || gs != ws {
				t.Errorf("CalibrationWork(%d) = %d %q, want %d %q", n, gx, gs, wx, ws)
			}
		})
	}
	// A fixed point, so that a change of the work itself is noticed: the
	// rates of older results would no longer compare.
	if x, s := dialect.CalibrationWork(1000000); x != 960218 || s != "HUGMYAGTTALXLUGM" {
		t.Errorf("CalibrationWork(1000000) = %d %q, want 960218 \"HUGMYAGTTALXLUGM\"", x, s)
	}
}

func TestCalibrationRate(t *testing.T) {
	cases := []struct {
		c    dialect.Calibration
		want float64
	}{
		{dialect.Calibration{Iterations: 1000, Seconds: 2}, 500},
		{dialect.Calibration{Iterations: 1000, Seconds: 0}, 0},
	}
	for _, tc := range cases {
		if got := tc.c.Rate(); got != tc.want {
			t.Errorf("%+v.Rate() = %g, want %g", tc.c, got, tc.want)
		}
	}
}
