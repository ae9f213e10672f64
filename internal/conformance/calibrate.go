package conformance

import (
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

// calibrationRounds is small: the suite checks the work, not the speed.
const calibrationRounds = 20000

// testCalibrate runs the CPU calibration loop inside the server on a
// database without a schema and checks that it did exactly the work of
// dialect.CalibrationWork (METHODOLOGY experiment 11).
func testCalibrate(t *testing.T, tg dialect.Target) {
	ctx := subtestContext(t)
	db := openDB(t, tg)
	c, ok := db.(dialect.CPUCalibrator)
	if !ok {
		t.Skipf("%s does not implement dialect.CPUCalibrator", db.Name())
	}
	if n, most := c.CalibrationIterations(); n < 1 || most < n {
		t.Errorf("CalibrationIterations() = %d, %d: want a default of at least 1 and a most not below it", n, most)
	} else if got, err := c.CalibrateCPU(ctx, most+1); err == nil {
		t.Errorf("CalibrateCPU(%d), one more than the most, = %+v: want an error", most+1, got)
	}
	for _, n := range []int64{1, 17, calibrationRounds} {
		got, err := c.CalibrateCPU(ctx, n)
		if err != nil {
			t.Fatalf("CalibrateCPU(%d): %v", n, err)
		}
		wx, ws := dialect.CalibrationWork(n)
		if got.X != wx || got.S != ws || got.Iterations != n {
			t.Errorf("CalibrateCPU(%d) = x %d s %q iterations %d, want x %d s %q iterations %d", n, got.X, got.S, got.Iterations, wx, ws, n)
		}
		// A loop of one round can take less than the server clock's
		// microsecond: only the longest must have a positive duration.
		if got.Seconds < 0 || (n == calibrationRounds && got.Seconds == 0) || got.Method == "" {
			t.Errorf("CalibrateCPU(%d) = %+v: want a duration (positive for %d rounds) and the method", n, got, calibrationRounds)
		}
		t.Logf("%s: %d rounds in %.4f s (%s)", db.Name(), n, got.Seconds, got.Method)
	}
	for _, n := range []int64{0, -5} {
		if got, err := c.CalibrateCPU(ctx, n); err == nil {
			t.Errorf("CalibrateCPU(%d) = %+v, want an error", n, got)
		}
	}
	// The loop left nothing behind that a build would trip over.
	for _, name := range schemaTables() {
		if ok, err := db.HasTable(ctx, name); err != nil || ok {
			t.Errorf("HasTable(%q) after calibrating = %v, %v: want false, nil", name, ok, err)
		}
	}
}
