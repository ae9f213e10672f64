package instance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/latency"
)

// A spec's Latency puts the instance's directories on a latency layer
// (internal/latency): mounted over data_dir (and wal_dir) in a private
// mount namespace that every process the instance starts enters
// (placement.layer), so the server sees the mount at the directory's own
// path while its data stays in the directory, which the host sees as it
// always was. The layer's process is not in the instance's cgroups: its
// I/O to the device is its own, and its CPU time is recorded with its
// figures (latency.Description).

// mountLatency mounts the layer the spec asks for.
func (i *Instance) mountLatency(ctx context.Context) error {
	s := i.spec.Latency
	if s == nil {
		return nil
	}
	var dirs []latency.Dir
	var where []string
	if s.On.Covers("data") {
		dirs = append(dirs, latency.Dir{Role: "data", Dir: i.data})
		where = append(where, i.dataDir)
	}
	if i.wal != nil && s.On.Covers("wal") {
		dirs = append(dirs, latency.Dir{Role: "wal", Dir: i.wal})
		where = append(where, i.walDir)
	}
	l, err := latency.Mount(ctx, dirs, latency.Options{Settings: *s, Log: i.log})
	if err != nil {
		var le *latency.Error
		if errors.As(err, &le) && le.Refused {
			return &Error{Kind: KindDirectory, Err: err}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Kind: KindControl, Err: err}
	}
	i.layer = l
	i.placement.layer = l
	i.controls = append(i.controls, Control{Name: "latency", Requested: s.String(),
		Method: "latency layer (FUSE, private mount namespace)", Where: strings.Join(where, ", "),
		Note: "the server's I/O reaches the device through the layer's process, outside the instance's cgroups"})
	i.notes = append(i.notes, "latency layer on "+strings.Join(where, " and ")+
		": io_accounting counts none of the server's I/O to the device (the layer's process does it); the layer's own figures do")
	return nil
}

// closeLatency unmounts the layer (after the server stopped); its last
// figures stay readable.
func (i *Instance) closeLatency() error {
	if i.layer == nil {
		return nil
	}
	return i.layer.Close(context.Background())
}

// Latency is the instance's latency layer, nil when it has none: its
// Snapshot at a run window's start and end gives the window's figures
// (latency.Snapshot.Since).
func (i *Instance) Latency() *latency.Layer { return i.layer }

// HelperCPUSeconds is the CPU time of the process oltplab runs beside the
// server, outside its cgroups and its process tree: the latency layer's,
// which does the server's I/O. ok is false without a layer, or when its
// process cannot be read. A run counts it with oltplab's own CPU, not as
// foreign (it is oltplab's process), nor as the server's (a real device
// that slow would cost the host no CPU).
func (i *Instance) HelperCPUSeconds() (seconds float64, ok bool) {
	if i.layer == nil {
		return 0, false
	}
	p, err := readProcStat(i.layer.PID())
	if err != nil {
		return 0, false
	}
	return float64(p.UTime+p.STime) / clockTicks, true
}

// describeLatency is the layer's description, with its figures so far.
func (i *Instance) describeLatency() *latency.Description {
	if i.layer == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := i.layer.Describe(ctx)
	return &d
}
