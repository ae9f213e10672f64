package store

import (
	"context"
	"errors"
	"testing"
)

// testShardRendezvous: each shard's first arrival counts and later ones
// do not move it; groups are apart; a shard that disagrees on the
// number of shards is refused.
func testShardRendezvous(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	first, err := s.ArriveShard(ctx, "big@1", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArriveShard(ctx, "other", 0, 2); err != nil {
		t.Fatal(err)
	}
	again, err := s.ArriveShard(ctx, "big@1", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !again.ArrivedAt.Equal(first.ArrivedAt) {
		t.Errorf("second arrival of shard 1 at %v: want its first, %v, kept", again.ArrivedAt, first.ArrivedAt)
	}
	if _, err := s.ArriveShard(ctx, "big@1", 0, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArriveShard(ctx, "big@1", 2, 4); !errors.Is(err, ErrShardCount) {
		t.Errorf("a shard of 4 in a group of 3: %v, want ErrShardCount", err)
	}
	if _, err := s.ArriveShard(ctx, "big@1", 3, 3); err == nil {
		t.Error("shard 3 of 3: want refused")
	}
	as, err := s.ShardArrivals(ctx, "big@1")
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Index != 0 || as[1].Index != 1 || as[0].Count != 3 || !as[1].ArrivedAt.Equal(first.ArrivedAt) {
		t.Fatalf("arrivals %+v: want shards 0 and 1 of 3, shard 1 at its first arrival", as)
	}
	if as[0].Writer.PID == 0 || as[0].Writer.Host == "" {
		t.Errorf("arrival writer %+v: want this process", as[0].Writer)
	}
	if !as[0].ArrivedAt.After(as[1].ArrivedAt) {
		t.Errorf("shard 0 arrived at %v, not after shard 1 (%v)", as[0].ArrivedAt, as[1].ArrivedAt)
	}
}
