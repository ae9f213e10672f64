package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/plan"
	"github.com/oltplab/oltplab/internal/sampler"
	"github.com/oltplab/oltplab/internal/scenario"
)

// Running is a target ready to measure: its database open, and for a
// managed instance, the server started.
type Running struct {
	Spec   *plan.TargetSpec
	DB     dialect.Database
	Target dialect.Target
	// Instance is the managed instance's description, recorded in the
	// context of every result measured on it; nil for a URL target.
	Instance any
	// Managed is the managed instance itself (its backups run inside its
	// cgroups); nil for a URL target.
	Managed *instance.Instance
	// OwnIO reads the managed instance's own I/O counters (nil when they
	// cannot be read: an embedded engine, no I/O cgroup).
	OwnIO sampler.IOProbe
	// Server is the managed instance, which a step may restart (a cold
	// cache) and whose CPU time it may read; nil for a URL target. A
	// step that restarts it reopens DB (Reopen).
	Server scenario.Server
	// Layer is the managed instance's latency layer, nil without one:
	// its figures are stored with every window measured on the target.
	Layer scenario.LatencyLayer
	// Remote is the instance's agent, for a target on another host (nil
	// here): the target's URL is a forwarder on this machine's loopback.
	Remote *Remote
	stop   func(ctx context.Context) error
}

// startTarget starts (managed) or opens (url) a target. secret is told
// every password the target uses, for scrubbing.
func startTarget(ctx context.Context, t *plan.TargetSpec, log *slog.Logger, secret func(string)) (*Running, error) {
	r := &Running{Spec: t, Target: t.Parsed()}
	if t.Agent != nil {
		var err error
		if r, err = startRemote(ctx, t, log, secret); err != nil {
			return nil, fmt.Errorf("start target %s on host %s: %w", t.Name, t.Host, err)
		}
	} else if t.Managed() {
		var err error
		if r, err = startManaged(ctx, t, log); err != nil {
			return nil, fmt.Errorf("start target %s: %w", t.Name, err)
		}
	}
	if secret != nil && r.Target.PasswordSet {
		secret(r.Target.Password.Reveal())
	}
	db, err := dialect.Open(ctx, r.Target)
	if err != nil {
		if r.stop != nil {
			err = errors.Join(err, r.stop(context.WithoutCancel(ctx)))
		}
		return nil, fmt.Errorf("open target %s: %w", t.Name, err)
	}
	r.DB = db
	return r, nil
}

// Reopen replaces DB with a new one on the managed instance's target,
// after a restart took the old one's connections (and perhaps its port).
func (r *Running) Reopen(ctx context.Context) error {
	if r.Server == nil {
		return nil
	}
	tg := r.Server.Target()
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		return fmt.Errorf("reopen target %s after its restart: %w", r.Spec.Name, err)
	}
	if r.DB != nil {
		_ = r.DB.Close() // its connections went with the server
	}
	r.DB, r.Target = db, tg
	return nil
}

// Stop closes the database and stops a managed instance.
func (r *Running) Stop(ctx context.Context) error {
	var errs []error
	if r.DB != nil {
		if err := r.DB.Close(); err != nil {
			errs = append(errs, err)
		}
		r.DB = nil
	}
	if r.stop != nil {
		if err := r.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop target %s: %w", r.Spec.Name, err))
		}
		r.stop = nil
	}
	return errors.Join(errs...)
}
