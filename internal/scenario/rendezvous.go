package scenario

import (
	"context"
	"fmt"
	"time"
)

// RendezvousLead is how long after the last shard's arrival the shards of
// a rendezvous start their ramp-up: time for every shard to see the last
// arrival (RendezvousPoll) and open its sessions.
const RendezvousLead = 10 * time.Second

// RendezvousPoll is how often a waiting shard reads the arrivals.
const RendezvousPoll = 500 * time.Millisecond

// RendezvousError: not every shard of the group arrived in time.
type RendezvousError struct {
	Group          string
	Arrived, Count int
	Waited         time.Duration
}

func (e *RendezvousError) Error() string {
	return fmt.Sprintf("shard rendezvous %q: %d of %d shards arrived within %s; start the others (same --shard-group, --shard I/%d) "+
		"or give more time (--rendezvous-timeout)", e.Group, e.Arrived, e.Count, e.Waited, e.Count)
}

// Rendezvous records shard index of count at the group's rendezvous in
// the results store the shards share, waits (up to timeout) until every
// shard has arrived, and returns the start they all agree on: the last
// arrival plus RendezvousLead, rounded up to the second. Every shard
// reads the same arrivals, so every shard computes the same instant,
// however far apart their processes started; the arrivals are stamped by
// each shard's own clock (keep the hosts' clocks in sync).
func (e *Env) Rendezvous(ctx context.Context, group string, index, count int, timeout time.Duration) (time.Time, error) {
	if _, err := e.Store.ArriveShard(ctx, group, index, count); err != nil {
		return time.Time{}, storeErr("arrive at the shard rendezvous", err)
	}
	e.note("shard %d/%d arrived at rendezvous %q; waiting up to %s for the others", index, count, group, timeout)
	begun := time.Now()
	deadline := begun.Add(timeout)
	for {
		as, err := e.Store.ShardArrivals(ctx, group)
		if err != nil {
			return time.Time{}, storeErr("read the shard rendezvous", err)
		}
		if len(as) == count {
			var last time.Time
			for _, a := range as {
				if a.ArrivedAt.After(last) {
					last = a.ArrivedAt
				}
			}
			start := last.Add(RendezvousLead).Truncate(time.Second).Add(time.Second)
			e.note("all %d shards arrived: ramp-up starts at %s", count, start.UTC().Format(time.RFC3339))
			return start, nil
		}
		if !time.Now().Before(deadline) {
			return time.Time{}, &RendezvousError{Group: group, Arrived: len(as), Count: count, Waited: timeout}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(min(RendezvousPoll, time.Until(deadline)+time.Millisecond)):
		}
	}
}
