package experiment

import (
	"context"
	"log/slog"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/scenario"
)

// startManaged starts the managed instance of t and returns its target,
// its description and how to stop it. The instance lives until stop is
// called (a Ctrl-C lets the step store what it measured first); ctx only
// bounds the start. The server dies with oltplab even on SIGKILL.
func startManaged(ctx context.Context, t *plan.TargetSpec, log *slog.Logger) (*Running, error) {
	// The directories above a target's own (a matrix's data_dir, the
	// examples' root) are made by Start when missing, mode 0755, so that
	// the server's own user can reach its directory below them, and
	// through no link another user could have planted (internal/claim).
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, end) // a Ctrl-C during the start aborts it
	inst, err := instance.Start(life, t.Instance, log)
	stopWatch()
	if err != nil {
		end()
		return nil, err
	}
	r := &Running{Spec: t, Target: inst.Target(), Instance: inst.Describe(), Managed: inst, Server: inst, OwnIO: scenario.OwnIO(inst),
		stop: func(ctx context.Context) error {
			defer end()
			return inst.Stop(ctx)
		}}
	if l := inst.Latency(); l != nil {
		r.Layer = l // a nil *latency.Layer would be a non-nil interface
	}
	return r, nil
}
