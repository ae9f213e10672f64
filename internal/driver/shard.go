package driver

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is this driver's part of a run that N driver processes share
// (`oltplab run --shard I/N`, I from 0 to N-1: Kubernetes'
// JOB_COMPLETION_INDEX). Shard I drives its share of each step's virtual
// users (the users FirstVU.. of the step's total, with their own random
// streams) on a contiguous range of warehouses as their home warehouses;
// remote warehouses (Payment's 15%, New-Order's 1% supply, TPC-C 2.5.1.2,
// 2.4.1.5) are still drawn over all of them. Its NOPM counts the New-Orders
// of its own warehouses' districts, so the shards' NOPM add up exactly to
// the database's; its TPM is its own count of completed transactions (the
// database's counter covers every shard). The zero value is no sharding.
//
// Shards share a start through Options.StartAt (the same wall-clock
// instant for all); shard 0 also reads the database-wide counters
// (GroupCounters). Each shard stores its own result, and MergeShards adds
// them into one: histograms added, NOPM from shard 0's database-wide read.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Set by Split for one step:
	TotalVUs       int `json:"total_vus"`
	FirstVU        int `json:"first_vu"` // global index (from 0) of this shard's first virtual user
	FirstWarehouse int `json:"first_warehouse"`
	LastWarehouse  int `json:"last_warehouse"`
}

// ParseShard reads I/N with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	switch {
	case !ok || ierr != nil || nerr != nil:
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 0/4 (I from 0 to N-1)", s)
	case n < 1 || n > 10000:
		return Shard{}, fmt.Errorf("shard %q: N must be between 1 and 10000", s)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("shard %q: I must be from 0 to %d", s, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// Active reports whether s splits the run.
func (s Shard) Active() bool { return s.Count > 0 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Split returns s for a step of vus virtual users on warehouses
// warehouses, and this shard's own virtual users: vus/N each, the first
// vus%N shards one more; warehouses in N contiguous ranges.
func (s Shard) Split(vus, warehouses int) (Shard, int, error) {
	if !s.Active() {
		return s, vus, nil
	}
	n, i := s.Count, s.Index
	if vus < n {
		return s, 0, fmt.Errorf("shard %s: a step of %d virtual user(s) cannot be split %d ways (give each shard at least one)", s, vus, n)
	}
	if warehouses < n {
		return s, 0, fmt.Errorf("shard %s: %d warehouse(s) cannot be split %d ways (build at least %d)", s, warehouses, n, n)
	}
	per, extra := vus/n, vus%n
	local := per
	if i < extra {
		local++
	}
	s.TotalVUs = vus
	s.FirstVU = i*per + min(i, extra)
	s.FirstWarehouse = i*warehouses/n + 1
	s.LastWarehouse = (i + 1) * warehouses / n
	return s, local, nil
}

// warehouses is the shard's number of home warehouses.
func (s Shard) warehouses() int { return s.LastWarehouse - s.FirstWarehouse + 1 }
