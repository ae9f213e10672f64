package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestParseShard(t *testing.T) {
	cases := []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"0/1", 0, 1, false}, {"0/4", 0, 4, false}, {"3/4", 3, 4, false},
		{"4/4", 0, 0, true}, {"-1/4", 0, 0, true}, {"1/0", 0, 0, true}, {"1", 0, 0, true}, {"a/b", 0, 0, true}, {"1/2/3", 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := driver.ParseShard(c.in)
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v, want error %v", err, c.wantErr)
			}
			if err == nil && (got.Index != c.i || got.Count != c.n) {
				t.Errorf("got %d/%d, want %d/%d", got.Index, got.Count, c.i, c.n)
			}
		})
	}
}

// TestShardSplit: the shards of a step take every virtual user and every
// warehouse exactly once, in contiguous ranges, as evenly as can be.
func TestShardSplit(t *testing.T) {
	for _, c := range []struct{ n, vus, w int }{{1, 5, 3}, {2, 4, 2}, {3, 10, 7}, {4, 4, 4}, {4, 89, 10}, {7, 100, 1000}} {
		t.Run(fmt.Sprintf("%d_shards_%d_vus_%d_warehouses", c.n, c.vus, c.w), func(t *testing.T) {
			nextVU, nextW := 0, 1
			for i := range c.n {
				s, local, err := driver.Shard{Index: i, Count: c.n}.Split(c.vus, c.w)
				if err != nil {
					t.Fatal(err)
				}
				if s.FirstVU != nextVU || s.FirstWarehouse != nextW || s.LastWarehouse < s.FirstWarehouse || s.TotalVUs != c.vus {
					t.Errorf("shard %d: %+v (%d VUs), want VUs from %d and warehouses from %d", i, s, local, nextVU, nextW)
				}
				if local < c.vus/c.n || local > c.vus/c.n+1 {
					t.Errorf("shard %d: %d VUs, want %d or %d", i, local, c.vus/c.n, c.vus/c.n+1)
				}
				nextVU, nextW = s.FirstVU+local, s.LastWarehouse+1
			}
			if nextVU != c.vus || nextW != c.w+1 {
				t.Errorf("shards cover VUs 0-%d and warehouses 1-%d, want 0-%d and 1-%d", nextVU-1, nextW-1, c.vus-1, c.w)
			}
		})
	}
	if _, _, err := (driver.Shard{Index: 0, Count: 3}).Split(2, 5); err == nil {
		t.Errorf("2 VUs split 3 ways: no error")
	}
	if _, _, err := (driver.Shard{Index: 0, Count: 3}).Split(6, 2); err == nil {
		t.Errorf("2 warehouses split 3 ways: no error")
	}
}

// districtOrders returns SUM(d_next_o_id) per warehouse.
func districtOrders(t *testing.T, db dialect.Database) map[int]int64 {
	t.Helper()
	ctx := context.Background()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := map[int]int64{}
	for w := 1; w <= 2; w++ {
		var n int64
		if err := c.QueryRow(ctx, fmt.Sprintf("SELECT SUM(d_next_o_id) FROM district WHERE d_w_id = %d", w)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[w] = n
	}
	return out
}

// TestShardRun: shard 1/2 on two warehouses places New-Orders on its own
// warehouse only, its NOPM counts exactly those, and the shard is
// recorded with the result.
func TestShardRun(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx := context.Background()
	db, err := dialect.Open(ctx, dbtest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 2, Workers: 1, Seed: 5, ToolVersion: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tpcc.ReadMeta(ctx, c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := districtOrders(t, db)
	o := shortRun()
	o.Rampup = 0
	sh, vus, err := driver.Shard{Index: 1, Count: 2}.Split(2, meta.Warehouses)
	if err != nil {
		t.Fatal(err)
	}
	o.Shard, o.VUs = sh, vus
	res, err := driver.Run(ctx, db, meta, o, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	after := districtOrders(t, db)
	if after[1] != before[1] {
		t.Errorf("warehouse 1 (shard 0's) got %d New-Orders from shard 1", after[1]-before[1])
	}
	if after[2] <= before[2] {
		t.Errorf("warehouse 2 got no New-Order from its shard")
	}
	if res.DBNewOrders <= 0 || res.DBNewOrders > after[2]-before[2] {
		t.Errorf("shard NOPM source counted %d New-Orders; its warehouse got %d in all", res.DBNewOrders, after[2]-before[2])
	}
	if res.TPMSource != driver.DriverTPMSource {
		t.Errorf("shard TPM source %q, want the driver's own count", res.TPMSource)
	}
	if res.IsSuspect() {
		t.Errorf("shard run suspect: %v", res.Suspect)
	}
	raw, err := json.Marshal(res.Options)
	if err != nil {
		t.Fatal(err)
	}
	var back driver.Options
	if err := json.Unmarshal(raw, &back); err != nil || back.Shard != sh {
		t.Errorf("stored options %s read back with shard %+v (err %v), want %+v", raw, back.Shard, err, sh)
	}
}
