package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// TestExitCodes: typed errors map to their exit codes, through wrapping.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		// A missing privilege (CHECKPOINT, SET GLOBAL) is not a failed login.
		{"missing privilege", &dialect.Error{Class: dialect.ClassAuth, Op: "checkpoint",
			Err: fmt.Errorf("%w: needs pg_checkpoint: permission denied", dialect.ErrNotPermitted)}, exitPermission},
		{"failed login", &dialect.Error{Class: dialect.ClassAuth, Op: "connect", Err: errors.New("password authentication failed")}, exitAuth},
		{"bad target parameter", &dialect.Error{Class: dialect.ClassOther, Op: "connect", Err: fmt.Errorf("%w: unknown parameter", dialect.ErrBadTarget)}, exitUsage},
		{"foreign tables", fmt.Errorf("build: %w", &load.ForeignTablesError{Tables: []string{"customer"}}), exitSchema},
		{"damaged store", fmt.Errorf("open: %w", store.ErrDamaged), exitStore},
		{"busy store", fmt.Errorf("store: %w", store.ErrBusy), exitStore},
		{"saved result", &store.SavedError{Path: "/x", Err: store.ErrBusy}, exitStore},
		{"not a saved result", fmt.Errorf("import: %w", store.ErrNotSaved), exitUsage},
		{"interrupted", fmt.Errorf("run: %w", context.Canceled), exitInterrupted},
		// The connection error it wraps would be exit 3 on its own.
		{"server gone for good", &scenario.RunError{RunID: 1, Status: store.StatusPartial, Err: fmt.Errorf("run stopped: %w: %w: %w",
			driver.ErrServerGone, errors.New("virtual user 1"), &dialect.Error{Class: dialect.ClassConnection, Op: "connect", Err: errors.New("refused")})}, exitRunFailed},
		{"too many failures", errors.Join(&scenario.FailuresError{Total: 1}, &scenario.SuspectError{Total: 1}), exitFailures},
		{"suspect", &scenario.SuspectError{Total: 1}, exitSuspect},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := exitCode(c.err); got != c.want {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}
