package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// ShardSlotGap is the pause between two steps (or repeats) of a sharded
// profile with a shared start: step i of every shard ramps up at
// StartAt + i × (ramp-up + window + grace + ShardSlotGap), leaving each
// shard time to store its result and prepare the next step.
const ShardSlotGap = 10 * time.Second

// SlotStart is the shared start instant of the i-th run (in profile
// order) of a sharded profile whose first run ramps up at d.StartAt.
func SlotStart(d driver.Options, i int) time.Time {
	period := d.Rampup + d.Duration + d.Grace + ShardSlotGap
	return d.StartAt.Add(time.Duration(i) * period)
}

// ShardGroupOptions name a sharded run to merge.
type ShardGroupOptions struct {
	Group string
	Count int
	Label string // the shards' label; "" matches any
	// Wait bounds how long MergeShardGroup waits for shards still
	// running; a shard not finished by then is merged as missing.
	Wait time.Duration
	// Poll is the interval between two looks at the store while waiting.
	Poll time.Duration
}

// MergeOutcome is a merged sharded run, stored as a profile of its own.
type MergeOutcome struct {
	ProfileID int64
	Runs      []int64
	Status    store.Status
	// Shards are the profiles of the shards, by shard index (0 when none
	// was found).
	Shards []int64
	// Missing names the shards missing from at least one merged run.
	Missing []int
	Results []*driver.Result
}

// ErrNoShardGroup: the store holds no profile of the named shard group.
var ErrNoShardGroup = errors.New("no shard of this group is stored")

// MergeShardGroup waits (up to o.Wait) until every shard of the group
// has finished its profile, then merges them step by step
// (driver.MergeShards) and stores the result as a new profile with the
// shards' label, which `results show`, `report` and `compare` then find
// as the newest of that label. The shards' own profiles stay stored. A
// shard whose process died, or that had not finished by the deadline, is
// missing: the merged runs are partial and name it.
func (e *Env) MergeShardGroup(ctx context.Context, o ShardGroupOptions) (MergeOutcome, error) {
	poll := o.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	deadline := time.Now().Add(o.Wait)
	var shards []store.Profile
	for {
		var err error
		shards, err = e.shardProfiles(ctx, o)
		if err != nil {
			return MergeOutcome{}, err
		}
		if e.shardsFinished(shards) || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return MergeOutcome{}, ctx.Err()
		case <-time.After(poll):
		}
	}
	ref := -1
	for i, p := range shards {
		if p.ID != 0 {
			ref = i
			break
		}
	}
	if ref < 0 {
		return MergeOutcome{}, fmt.Errorf("merge shard group %q: %w", o.Group, ErrNoShardGroup)
	}
	out := MergeOutcome{Shards: make([]int64, o.Count)}
	runs := make([]map[[2]int]store.Run, o.Count)
	for i, p := range shards {
		out.Shards[i] = p.ID
		runs[i] = map[[2]int]store.Run{}
		if p.ID == 0 {
			continue
		}
		rs, err := e.Store.ListRuns(ctx, store.RunFilter{Kind: store.KindRun, ProfileID: p.ID, Counting: true})
		if err != nil {
			return out, storeErr("read the runs of a shard", err)
		}
		for _, r := range rs {
			k := [2]int{r.Step, r.Repeat}
			if old, ok := runs[i][k]; !ok || r.ID > old.ID {
				runs[i][k] = r
			}
		}
	}
	var slots [][2]int
	for k := range runs[ref] {
		slots = append(slots, k)
	}
	sort.Slice(slots, func(a, b int) bool {
		return slots[a][0] < slots[b][0] || slots[a][0] == slots[b][0] && slots[a][1] < slots[b][1]
	})

	// Merge every slot first: the profile's parameters describe them.
	type merged struct {
		res  *driver.Result
		from []int64
	}
	var ms []merged
	missing := map[int]bool{}
	for _, slot := range slots {
		var parts []driver.ShardPart
		var ids []int64
		for i := range o.Count {
			part, err := e.shardPart(ctx, i, shards[i], runs[i], slot)
			if err != nil {
				return out, err
			}
			if part.Result == nil {
				missing[i] = true
			}
			ids = append(ids, part.RunID)
			parts = append(parts, part)
		}
		res, err := driver.MergeShards(o.Group, o.Count, parts)
		if err != nil {
			return out, err
		}
		ms = append(ms, merged{res: res, from: ids})
	}
	var results []*driver.Result
	for _, m := range ms {
		results = append(results, m.res)
	}
	params := map[string]any{}
	_ = json.Unmarshal(shards[ref].Params, &params)
	delete(params, "shard")
	delete(params, "shard_index")
	params["merged_from_profiles"] = out.Shards
	params["shards"] = ShardsNote(results)
	pid, err := e.Store.CreateProfile(ctx, store.Profile{Label: shards[ref].Label, Params: JSON(params), Context: shards[ref].Context})
	if err != nil {
		return out, storeErr("record the merged profile", err)
	}
	out.ProfileID = pid
	// The merged profile's status from its runs'; with no slot at all it
	// measured nothing.
	facts := summary.Facts{Failed: len(slots) == 0}
	for i, m := range ms {
		id, st, err := e.storeMerged(ctx, pid, runs[ref][slots[i]], m.res, m.from)
		if err != nil {
			_ = e.Store.FinishProfile(context.WithoutCancel(ctx), pid, store.StatusFailed)
			return out, err
		}
		out.Runs, out.Results = append(out.Runs, id), append(out.Results, m.res)
		facts.Include(st)
	}
	for i := range missing {
		out.Missing = append(out.Missing, i)
	}
	sort.Ints(out.Missing)
	status := summary.Status(facts)
	out.Status = status
	if err := e.Store.FinishProfile(ctx, pid, status); err != nil {
		return out, storeErr("record the merged profile's result", err)
	}
	return out, nil
}

// shardProfiles finds the newest profile of each shard of the group (a
// zero Profile for a shard not stored).
func (e *Env) shardProfiles(ctx context.Context, o ShardGroupOptions) ([]store.Profile, error) {
	ps, err := e.Store.ListProfiles(ctx, store.ProfileFilter{Label: o.Label})
	if err != nil {
		return nil, storeErr("look for the shards' profiles", err)
	}
	out := make([]store.Profile, o.Count)
	for _, p := range ps { // newest first
		var params struct {
			Group string `json:"shard_group"`
			Index *int   `json:"shard_index"`
			Count int    `json:"shard_count"`
		}
		if json.Unmarshal(p.Params, &params) != nil || params.Group != o.Group || params.Index == nil || params.Count != o.Count {
			continue
		}
		if i := *params.Index; i >= 0 && i < o.Count && out[i].ID == 0 {
			out[i] = p
		}
	}
	return out, nil
}

// shardsFinished reports whether every shard has a profile that is no
// longer running (or whose process on this host is gone).
func (e *Env) shardsFinished(ps []store.Profile) bool {
	for _, p := range ps {
		if p.ID == 0 || p.Status == store.StatusRunning && !e.Store.WriterGone(p.Writer) {
			return false
		}
	}
	return true
}

// shardPart reads shard i's stored result of one slot.
func (e *Env) shardPart(ctx context.Context, i int, p store.Profile, runs map[[2]int]store.Run, slot [2]int) (driver.ShardPart, error) {
	part := driver.ShardPart{Index: i}
	if p.ID == 0 {
		part.Why = "its profile was not found in the results store"
		return part, nil
	}
	r, ok := runs[slot]
	if !ok {
		part.Why = fmt.Sprintf("profile %d stored no run of step %d, repeat %d", p.ID, slot[0], slot[1])
		return part, nil
	}
	part.RunID = r.ID
	if len(r.Summary) == 0 {
		why := string(r.Status)
		if r.Status == store.StatusRunning {
			why = "still running when the merge stopped waiting"
			if e.Store.WriterGone(r.Writer) {
				why = "its process ended without storing a result"
			}
		}
		part.Why = fmt.Sprintf("run %d stored no result (%s)", r.ID, why)
		return part, nil
	}
	s, err := summary.DecodeRun(r.Summary)
	if err != nil {
		return part, fmt.Errorf("read the result of shard %d (run %d): %w", i, r.ID, err)
	}
	hs, err := e.Store.LoadHistograms(ctx, r.ID)
	if err != nil {
		return part, storeErr(fmt.Sprintf("read the histograms of shard %d (run %d)", i, r.ID), err)
	}
	part.Result = s.Result
	part.Histograms = map[tpcc.TxKind]*hdrhistogram.Histogram{}
	for k := range tpcc.NumTxKinds {
		if h, ok := hs[tpcc.TxKind(k).String()]; ok {
			part.Histograms[tpcc.TxKind(k)] = h
		}
	}
	return part, nil
}

// storeMerged stores one merged result as a run of the merged profile.
func (e *Env) storeMerged(ctx context.Context, pid int64, ref store.Run, res *driver.Result, from []int64) (int64, store.Status, error) {
	id, err := e.Store.CreateRun(ctx, store.Run{
		Kind: store.KindRun, Label: ref.Label, ProfileID: pid, Step: ref.Step, Repeat: ref.Repeat, VUs: res.Options.Users(),
		Target: ref.Target, Dialect: ref.Dialect, ToolVersion: e.ToolVersion, Seed: ref.Seed,
		Params:  JSON(map[string]any{"driver": res.Options, "merged_from_runs": from}),
		Context: ref.Context,
	})
	if err != nil {
		return 0, "", storeErr("record a merged run", err)
	}
	status := summary.RunStatus(res, false)
	o := store.Outcome{Status: status, Summary: JSON(summary.Run{Version: summary.RunVersion, Result: res}),
		Histograms: map[string]*hdrhistogram.Histogram{}}
	for k, h := range res.Histograms() {
		o.Histograms[k.String()] = h
	}
	if len(res.Series) > 0 {
		o.Samples = summary.WorkloadSamples(res)
	}
	if err := e.complete(ctx, id, o); err != nil {
		return id, status, err
	}
	return id, status, nil
}

// ShardsNote says in one line how merged results were made: how many
// shards, how far their windows were from the reference's against the
// tolerance, and which shards are missing.
func ShardsNote(rs []*driver.Result) string {
	var m *driver.ShardMerge
	worst, tol := 0.0, 0.0
	within := true
	missing := map[int]string{}
	for _, r := range rs {
		if r.Shards == nil {
			continue
		}
		m = r.Shards
		tol = max(tol, m.ToleranceSeconds)
		within = within && m.WithinTolerance
		for _, f := range m.Shards {
			worst = max(worst, abs(f.StartOffsetSeconds), abs(f.EndOffsetSeconds))
		}
		for _, x := range m.Missing {
			if _, ok := missing[x.Index]; !ok {
				missing[x.Index] = x.Why
			}
		}
	}
	if m == nil {
		return ""
	}
	note := fmt.Sprintf("merged from %d of %d shards (group %s): windows within ±%.3f s of shard %d's (tolerance %.1f s)",
		len(m.Merged), m.Count, m.Group, worst, m.Reference, tol)
	if !within {
		note = fmt.Sprintf("merged from %d of %d shards (group %s): windows up to %.3f s off shard %d's, OUTSIDE the tolerance of %.1f s",
			len(m.Merged), m.Count, m.Group, worst, m.Reference, tol)
	}
	idx := make([]int, 0, len(missing))
	for i := range missing {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		note += fmt.Sprintf("; PARTIAL: shard %d/%d missing (%s)", i, m.Count, missing[i])
	}
	return note
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
