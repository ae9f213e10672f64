package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ShardArrival is one driver process's arrival at the rendezvous of a
// sharded run (`oltplab run --shard I/N --shard-group NAME` without
// --start-at): the shards of a group find each other here and agree on
// their start from the arrivals (scenario.Rendezvous).
type ShardArrival struct {
	Group     string
	Index     int
	Count     int
	ArrivedAt time.Time // the arriving process's clock
	Writer    Writer
}

// ErrShardCount: a shard arrived saying its group has another number of
// shards than those already there.
var ErrShardCount = errors.New("the shards of this group disagree on their number")

// ArriveShard records shard index of count at the group's rendezvous,
// at the store's now. Only the first arrival of an index counts (a
// second one is kept out, so the agreed start cannot move); it returns
// the arrival that counts. A count that differs from the group's is
// refused with ErrShardCount.
func (s *Store) ArriveShard(ctx context.Context, group string, index, count int) (ShardArrival, error) {
	if group == "" || index < 0 || index >= count {
		return ShardArrival{}, fmt.Errorf("arrive at shard rendezvous %q as %d/%d: not a shard of a named group", group, index, count)
	}
	var other int
	err := s.db.QueryRowContext(ctx, `SELECT shard_count FROM shard_arrivals WHERE shard_group = ? AND shard_count <> ? LIMIT 1`,
		group, count).Scan(&other)
	switch {
	case err == nil:
		return ShardArrival{}, fmt.Errorf("arrive at shard rendezvous %q as %d/%d: %w (%d)", group, index, count, ErrShardCount, other)
	case !errors.Is(err, sql.ErrNoRows):
		return ShardArrival{}, fmt.Errorf("arrive at shard rendezvous %q: %w", group, s.classify(err))
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO shard_arrivals
		(shard_group, shard_index, shard_count, arrived_at, writer_pid, writer_host) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (shard_group, shard_index) DO NOTHING`,
		group, index, count, formatTime(s.now()), nullZero(int64(s.writer.PID)), nullString(s.writer.Host)); err != nil {
		return ShardArrival{}, fmt.Errorf("arrive at shard rendezvous %q as %d/%d: %w", group, index, count, s.classify(err))
	}
	as, err := s.ShardArrivals(ctx, group)
	if err != nil {
		return ShardArrival{}, err
	}
	for _, a := range as {
		if a.Index == index {
			return a, nil
		}
	}
	return ShardArrival{}, fmt.Errorf("arrive at shard rendezvous %q as %d/%d: the arrival was not stored", group, index, count)
}

// ShardArrivals returns the arrivals of group, by shard index.
func (s *Store) ShardArrivals(ctx context.Context, group string) ([]ShardArrival, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT shard_group, shard_index, shard_count, arrived_at, writer_pid, writer_host
		FROM shard_arrivals WHERE shard_group = ? ORDER BY shard_index`, group)
	if err != nil {
		return nil, fmt.Errorf("read shard rendezvous %q: %w", group, s.classify(err))
	}
	defer rows.Close()
	var out []ShardArrival
	for rows.Next() {
		var (
			a       ShardArrival
			arrived string
			pid     sql.NullInt64
			host    sql.NullString
		)
		if err := rows.Scan(&a.Group, &a.Index, &a.Count, &arrived, &pid, &host); err != nil {
			return nil, fmt.Errorf("read shard rendezvous %q: %w", group, s.classify(err))
		}
		if a.ArrivedAt, err = parseTime(arrived); err != nil {
			return nil, fmt.Errorf("read shard rendezvous %q: arrival of shard %d: %w", group, a.Index, err)
		}
		a.Writer = Writer{PID: int(pid.Int64), Host: host.String}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read shard rendezvous %q: %w", group, s.classify(err))
	}
	return out, nil
}
