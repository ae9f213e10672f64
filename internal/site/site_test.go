package site

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/store"
)

// TestIndexTellsShardsFromTheirMerge: a sharded run stores one profile
// per shard and their merge, all under the run's label; the index says
// which is which (in the list and in the compare form), and says nothing
// of shards for a profile of an unsharded run.
func TestIndexTellsShardsFromTheirMerge(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	params := func(m map[string]any) json.RawMessage {
		b, _ := json.Marshal(m)
		return b
	}
	for _, p := range []store.Profile{
		{Label: "plain", Params: params(map[string]any{"steps": []int{4}})},
		{Label: "sharded", Params: params(map[string]any{"shard": "0/2", "shard_index": 0, "shard_count": 2, "shard_group": "g1"})},
		{Label: "sharded", Params: params(map[string]any{"shard": "1/2", "shard_index": 1, "shard_count": 2, "shard_group": "g1"})},
		{Label: "sharded", Params: params(map[string]any{"merged_from_profiles": []int64{2, 3}, "shards": "2 shards"})},
		{Label: "sharded", Params: params(map[string]any{"merged_from_profiles": []int64{2, 0}})},
	} {
		if _, err := st.CreateProfile(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer((&Server{Store: st, Version: "test"}).Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for _, want := range []string{
		"<td>shard 0/2 of g1: this shard&#39;s part only</td>",
		"<td>shard 1/2 of g1: this shard&#39;s part only</td>",
		"<td>merged from 2 shards (profiles 2, 3)</td>",
		"<td>merged from 1 of 2 shards (profiles 2)</td>",
		"4 sharded (merged from 2 shards (profiles 2, 3))</option>",
		"2 sharded (shard 0/2 of g1: this shard&#39;s part only)</option>",
		"1 plain</option>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %q", want)
		}
	}
}
