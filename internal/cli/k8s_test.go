package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestK8sManifestBadInput: a password in the target, run flags the
// manifest sets itself or that cannot split, are usage errors; the
// password is never printed.
func TestK8sManifestBadInput(t *testing.T) {
	env := storeEnv(t)
	base := []string{"k8s", "manifest", "--image", "img:1", "--shards", "4"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--target", "postgres://bench:s3cretpass@db:5432/tpcc"}, "password"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--", "--target", "sqlite:x"}, "--target"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--", "--shard", "1/2"}, "--shard"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--", "--vus", "2"}, "4 shards"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--", "--vus", "0"}, "--vus"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--", "--reset-between"}, "reset"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--cpu", "lots"}, "cpu"},
		{[]string{"--target", "postgres://bench@db/tpcc", "--name", "Bad_Name"}, "name"},
	}
	for _, c := range cases {
		t.Run(cut(strings.Join(c.args, "_"), 60), func(t *testing.T) {
			r := oltplab(t, env, append(append([]string{}, base...), c.args...)...)
			if r.code != exitUsage || !strings.Contains(r.err, c.want) {
				t.Errorf("exit %d, %q; want %d mentioning %q", r.code, r.err, exitUsage, c.want)
			}
			if strings.Contains(r.out+r.err, "s3cretpass") {
				t.Errorf("the password is printed")
			}
		})
	}
}

// TestK8sShardsRunLocally: the manifest's container arguments, with each
// completion index in place of $(SHARD_INDEX), run as two concurrent
// shards on one SQLite database; each stores its run with its shard and
// counts its own warehouse's New-Orders.
func TestK8sShardsRunLocally(t *testing.T) {
	testenv.Require(t, testenv.Long)
	env := storeEnv(t)
	db := filepath.Join(t.TempDir(), "tpcc.db")
	target := "sqlite:" + db
	if r := oltplab(t, env, "build", "--target", target, "--warehouses", "2"); r.code != 0 {
		t.Fatalf("build: exit %d", r.code)
	}
	r := oltplab(t, env, "k8s", "manifest", "--image", "img:1", "--shards", "2", "--target", target, "--metrics-port", "0",
		"--", "--vus", "2", "--rampup", "0s", "--duration", "2s", "--grace", "1s", "--label", "k8s", "--json")
	if r.code != 0 {
		t.Fatalf("manifest: exit %d", r.code)
	}
	var job batchv1.Job
	if err := yaml.Unmarshal([]byte(r.out), &job); err != nil {
		t.Fatal(err)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	var wg sync.WaitGroup
	outs := make([]result, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := make([]string, len(args))
			for k, s := range args {
				a[k] = strings.ReplaceAll(s, "$(SHARD_INDEX)", fmt.Sprint(i))
			}
			outs[i] = oltplab(t, env, a...)
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o.code != 0 {
			t.Fatalf("shard %d: exit %d", i, o.code)
		}
		var got struct {
			Result struct {
				NOPM        float64 `json:"nopm"`
				DBNewOrders int64   `json:"db_new_orders"`
				Options     struct {
					VUs   int `json:"vus"`
					Shard struct {
						Index, Count   int
						FirstWarehouse int `json:"first_warehouse"`
					} `json:"shard"`
				} `json:"options"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(o.out), &got); err != nil {
			t.Fatalf("shard %d output: %v\n%s", i, err, o.out)
		}
		sh := got.Result.Options.Shard
		if sh.Index != i || sh.Count != 2 || sh.FirstWarehouse != i+1 || got.Result.Options.VUs != 1 {
			t.Errorf("shard %d recorded as %+v with %d VUs; want %d/2 on warehouse %d with 1 VU", i, sh, got.Result.Options.VUs, i, i+1)
		}
		if got.Result.DBNewOrders <= 0 {
			t.Errorf("shard %d counted no New-Order of its warehouse", i)
		}
	}
}
