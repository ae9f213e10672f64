package scenario

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/fio"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// CapacityError says that a run asks for more than the server or this
// host can give: more connections than the server accepts now, or more
// memory than the host has available. Nothing was opened or allocated.
type CapacityError struct{ Err error }

func (e *CapacityError) Error() string { return e.Err.Error() }
func (e *CapacityError) Unwrap() error { return e.Err }

// samplerConnections are the connections oltplab opens on the database
// beside a run's sessions and its counter reader: the samplers' (waits
// and the database's counters).
const samplerConnections = 2

// memoryShare is the share of the host's available memory a run may take:
// the database, when it runs on this host, needs the rest, and the
// driver must never be why the host swaps.
const memoryShare = 2 // at most 1/memoryShare

// users names what a run's users are, for messages.
func users(d driver.Options, n int) string {
	if d.Mode == driver.ModeTPCC {
		return fmt.Sprintf("%d terminals on %d sessions", d.Terminals, d.Sessions+d.DeliverySessions)
	}
	return fmt.Sprintf("%d virtual users", n)
}

// stepNeeds is what a step of n users asks for (virtual users, or tpc-c
// terminals with their sessions), split over the shards when the run is
// one shard of several, and how to name them.
func stepNeeds(d driver.Options, n, warehouses int) (driver.Needs, string, error) {
	if d.Mode == driver.ModeTPCC {
		d.Terminals = n
	} else {
		d.VUs = n
	}
	if d.Shard.Active() {
		var err error
		if d.Shard, d.VUs, err = d.Shard.Split(n, warehouses); err != nil {
			return driver.Needs{}, "", &ShardError{Err: err}
		}
	}
	d = d.ForWarehouses(warehouses)
	return d.Needs(warehouses), users(d, d.VUs), nil
}

// checkConnections refuses a run whose sessions the database would not
// accept: more than its server accepts from this user now
// (dialect.ConnectionLimiter), or more than an embedded database's bound
// (Capabilities.MaxSessions). A server that does not say is not checked
// (the run then fails on the server's own error when it opens them).
func (e *Env) checkConnections(ctx context.Context, db dialect.Database, need driver.Needs, what string) error {
	conns := need.Connections + samplerConnections
	if n := db.Caps().MaxSessions; n > 0 && need.Connections-1 > n {
		return &CapacityError{Err: fmt.Errorf("%s: %s takes at most %d sessions in one run (one writer at a time: more sessions only queue on its lock)",
			what, db.Name(), n)}
	}
	cl, ok := db.(dialect.ConnectionLimiter)
	if !ok {
		return nil
	}
	lim, err := cl.ConnectionLimit(ctx)
	if err != nil {
		e.note("could not check the server's connection limit: %v", err)
		return nil
	}
	if conns > lim.Available {
		return &CapacityError{Err: fmt.Errorf("%s need %d connections (with oltplab's own %d), but the server accepts %d more from this user (%s): "+
			"use fewer, or raise the server's limit", what, conns, conns-(need.Connections-1), lim.Available, lim.Detail)}
	}
	return nil
}

// checkMemory refuses a run whose driver would hold more than
// 1/memoryShare of the memory this host has available (driver.VUBytes a
// virtual user or session, driver.TerminalBytes a terminal).
func (e *Env) checkMemory(need int64, what string) error {
	avail, err := e.memAvailable()
	if err != nil {
		e.note("could not check the memory available: %v", err)
		return nil
	}
	if need > avail/memoryShare {
		return &CapacityError{Err: fmt.Errorf("%s need about %s of memory in oltplab (%s a virtual user or session), more than half of the %s this host has available: use fewer",
			what, fio.FormatBytes(need), fio.FormatBytes(driver.VUBytes), fio.FormatBytes(avail))}
	}
	return nil
}

func (e *Env) memAvailable() (int64, error) {
	if e.MemAvailable != nil {
		return e.MemAvailable()
	}
	return sysstat.NewFS("/").MemAvailable()
}

// CheckCapacity refuses, before anything is opened or allocated, a run
// with a step that asks for more connections than db accepts or more
// memory than this host has available (CapacityError).
func (e *Env) CheckCapacity(ctx context.Context, db dialect.Database, d driver.Options, steps []int, warehouses int) error {
	var conns, mem driver.Needs
	var connsWhat, memWhat string
	for _, n := range steps {
		need, what, err := stepNeeds(d, n, warehouses)
		if err != nil {
			return err
		}
		if need.Connections > conns.Connections {
			conns, connsWhat = need, what
		}
		if need.Bytes > mem.Bytes {
			mem, memWhat = need, what
		}
	}
	if err := e.checkConnections(ctx, db, conns, connsWhat); err != nil {
		return err
	}
	return e.checkMemory(mem.Bytes, memWhat)
}
