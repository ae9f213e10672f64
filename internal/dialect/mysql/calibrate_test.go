package mysql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// TestCalibrateCanceled: a canceled calibration stops on the server and
// drops the procedure it created.
func TestCalibrateCanceled(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	if _, err := d.CalibrateCPU(ctx, 1000); err != nil {
		t.Fatalf("CalibrateCPU: %v", err)
	}
	canceled, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	// Enough rounds to loop for many minutes.
	if _, err := d.CalibrateCPU(canceled, 1<<32); !errors.Is(err, context.DeadlineExceeded) && dialect.ClassOf(err) != dialect.ClassCanceled {
		t.Errorf("CalibrateCPU past its deadline: got %v, want the deadline's error", err)
	}
	// The server stops the loop once killed; wait for it, boundedly.
	var running int
	for deadline := time.Now().Add(30 * time.Second); ; {
		// This test's database only: other packages' tests calibrate on
		// the same shared server at the same time.
		if err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE DB = DATABASE() AND INFO LIKE 'CALL %oltplab_cpu_calibration%'`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if running != 0 {
		t.Errorf("%d calibration call(s) still running on the server 30 s after the cancel, want 0", running)
	}
	var left int
	if err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE 'oltplab_cpu_calibration%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d calibration procedure(s) left in the database, want 0", left)
	}
}
