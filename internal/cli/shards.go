package cli

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// maxStartAhead is how far ahead --start-at may be: further is a typo
// more likely than a plan, and the driver would hold its sessions open
// meanwhile.
const maxStartAhead = 24 * time.Hour

// shardStart reads --start-at and --shard-group: the shared start
// instant, the group the shards find each other by, and (unless --seed
// was given) a seed drawn from the group's name, so that every shard
// draws the same run-time constants and disjoint streams of one run.
func (o *runOptions) shardStart(now time.Time, seedGiven bool) error {
	if o.startAt == "" {
		if o.shardGroup == "" {
			return nil
		}
		// A rendezvous through the results store (Env.Rendezvous).
		if !o.driver.Shard.Active() {
			return usageErrorf("run: --shard-group goes with --shard")
		}
		if err := checkLabel("run", o.shardGroup); err != nil {
			return usageErrorf("run: --shard-group %s holds control characters or is too long", quoted(o.shardGroup))
		}
		if o.rendezvousTimeout <= 0 {
			return usageErrorf("run: --rendezvous-timeout must be positive")
		}
		o.groupSeed(seedGiven)
		return nil
	}
	t, err := time.Parse(time.RFC3339, o.startAt)
	if err != nil {
		return usageErrorf("run: --start-at %s: want an RFC 3339 instant, e.g. 2026-11-25T10:00:00Z", quoted(o.startAt))
	}
	switch {
	case t.Before(now):
		return withCode(exitStartAt, fmt.Errorf("run: --start-at %s has passed (now %s): give every shard the same instant ahead",
			t.Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	case t.After(now.Add(maxStartAhead)):
		return withCode(exitStartAt, fmt.Errorf("run: --start-at %s is more than %s ahead (now %s)",
			t.Format(time.RFC3339), maxStartAhead, now.UTC().Format(time.RFC3339)))
	}
	o.driver.StartAt = t
	if !o.driver.Shard.Active() {
		if o.shardGroup != "" {
			return usageErrorf("run: --shard-group goes with --shard")
		}
		return nil
	}
	if o.shardGroup == "" {
		o.shardGroup = o.label + "@" + t.UTC().Format(time.RFC3339Nano)
	}
	if err := checkLabel("run", o.shardGroup); err != nil {
		return usageErrorf("run: --shard-group %s holds control characters or is too long", quoted(o.shardGroup))
	}
	o.groupSeed(seedGiven)
	return nil
}

// groupSeed draws the seed from the group's name unless --seed was given.
func (o *runOptions) groupSeed(seedGiven bool) {
	if !seedGiven {
		h := fnv.New64a()
		h.Write([]byte(o.shardGroup))
		o.load.Seed = h.Sum64() | 1
	}
}

// rendezvous is the profile's wait for the other shards, when the shards
// agree on their start through the results store.
func (o runOptions) rendezvous(env *scenario.Env) func(context.Context) (time.Time, error) {
	if o.startAt != "" || o.shardGroup == "" {
		return nil
	}
	sh := o.driver.Shard
	return func(ctx context.Context) (time.Time, error) {
		return env.Rendezvous(ctx, o.shardGroup, sh.Index, sh.Count, o.rendezvousTimeout)
	}
}

// mergeShards, for shard 0, waits for the other shards and stores their
// merge.
func (a *app) mergeShards(ctx context.Context, st *store.Store, o runOptions) error {
	n := o.driver.Shard.Count
	if !o.json {
		fmt.Fprintf(a.errw(), "merging the %d shards of group %s (waiting up to %s for the others)\n", n, quoted(o.shardGroup), o.shardWait)
	}
	return a.storeMerge(ctx, st, scenario.ShardGroupOptions{Group: o.shardGroup, Count: n, Label: o.label, Wait: o.shardWait}, o.json)
}

// storeMerge merges a shard group and prints the merged profile.
func (a *app) storeMerge(ctx context.Context, st *store.Store, g scenario.ShardGroupOptions, asJSON bool) error {
	out, err := a.scenarioEnv(st, scenario.Observer{}).MergeShardGroup(ctx, g)
	if err != nil {
		if errors.Is(err, scenario.ErrNoShardGroup) {
			return usageErrorf("merge: no profile of shard group %s (of %d shards) is stored", quoted(g.Group), g.Count)
		}
		return fmt.Errorf("merge the shards of group %s: %w", quoted(g.Group), err)
	}
	if asJSON {
		if err := writeJSON(a.out(), map[string]any{"merged_profile_id": out.ProfileID, "status": out.Status, "runs": out.Runs,
			"shard_profiles": out.Shards, "missing_shards": out.Missing, "results": out.Results}); err != nil {
			return err
		}
	} else {
		w := a.out()
		fmt.Fprintf(w, "merged profile %d (%s): %s\n", out.ProfileID, out.Status, scenario.ShardsNote(out.Results))
		for i, res := range out.Results {
			fmt.Fprintf(w, "  run %d: %d virtual users, NOPM %s from %s; TPM %s from %s; New-Order p99 %s ms\n",
				out.Runs[i], res.Options.VUs, thousands(res.NOPM), res.NOPMSource, thousands(res.TPM), res.TPMSource,
				millis(res.Kinds[tpcc.NewOrderTx].LatencyMicros.P99))
			if m := res.Shards; m != nil && m.NewOrdersNote != "" {
				fmt.Fprintf(w, "    %s\n", m.NewOrdersNote)
			}
		}
		fmt.Fprintf(w, "the shards' own profiles stay stored: %s\n", joinIDs(out.Shards))
	}
	switch {
	case len(out.Missing) > 0:
		var names []string
		for _, i := range out.Missing {
			names = append(names, fmt.Sprintf("%d/%d", i, g.Count))
		}
		return withCode(exitShardMissed, fmt.Errorf("merged profile %d is partial: shard %s stored no result (see oltplab results list)",
			out.ProfileID, strings.Join(names, ", ")))
	case out.Status == store.StatusSuspect:
		return withCode(exitSuspect, fmt.Errorf("merged profile %d is suspect: %s", out.ProfileID, scenario.ShardsNote(out.Results)))
	}
	return nil
}

func millis(micros int64) string { return fmt.Sprintf("%.1f", float64(micros)/1000) }

func joinIDs(ids []int64) string {
	var s []string
	for i, id := range ids {
		if id == 0 {
			s = append(s, fmt.Sprintf("shard %d none", i))
			continue
		}
		s = append(s, fmt.Sprintf("shard %d profile %d", i, id))
	}
	return strings.Join(s, ", ")
}

// resultsMerge is `oltplab results merge`: merge a shard group by hand
// (shard 0 died before merging, or merge again).
func resultsMerge(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		g      scenario.ShardGroupOptions
		asJSON bool
	)
	fs := newFlagSet("results merge")
	sf.register(fs, a.env)
	fs.StringVar(&g.Group, "shard-group", "", "`NAME` of the sharded run (its --shard-group; by default LABEL@START-AT)")
	fs.IntVar(&g.Count, "shards", 0, "`N`, the run's number of shards")
	fs.StringVar(&g.Label, "label", "", "`LABEL` of the shards' profiles")
	fs.DurationVar(&g.Wait, "wait", 0, "`DURATION` to wait for shards still running")
	fs.BoolVar(&asJSON, "json", false, "print the merged profile as JSON")
	if _, err := a.parseWithArgs(fs, resultsMergeSynopsis, args); err != nil {
		return helpOK(err)
	}
	if err := checkLabel("results merge", g.Label); err != nil {
		return err
	}
	if g.Group == "" || g.Count < 1 {
		return usageErrorf("results merge: want --shard-group NAME and --shards N")
	}
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	return a.storeMerge(ctx, st, g, asJSON)
}

const resultsMergeSynopsis = "results merge --shard-group NAME --shards N [--label L] [--wait D] [--json]"

// printShards says, under a merged result, what it was merged from.
func printShards(w io.Writer, m *driver.ShardMerge) {
	fmt.Fprintf(w, "  shards   %d of %d merged (group %s); windows against shard %d's (tolerance %.1f s): ",
		len(m.Merged), m.Count, m.Group, m.Reference, m.ToleranceSeconds)
	var offs []string
	for _, f := range m.Shards {
		offs = append(offs, fmt.Sprintf("%d (run %d) %+.3f s", f.Index, f.RunID, f.StartOffsetSeconds))
	}
	fmt.Fprintln(w, strings.Join(offs, ", "))
	if !m.WithinTolerance {
		fmt.Fprintln(w, "           OUTSIDE the tolerance: the shards measured different intervals")
	}
	for _, x := range m.Missing {
		fmt.Fprintf(w, "  MISSING  shard %d/%d: %s\n", x.Index, m.Count, x.Why)
	}
	if m.NewOrdersNote != "" {
		fmt.Fprintf(w, "           %s\n", m.NewOrdersNote)
	}
}
