package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/k8s"
	"github.com/oltplab/oltplab/internal/store"
)

const k8sSynopsis = "k8s manifest --image IMAGE --shards N --target URL [--password-secret NAME] [--start-at TIME|--shard-group NAME --results URL [--results-password-secret NAME]] [-o FILE] [-- RUN-FLAGS...]"

// runK8s dispatches `oltplab k8s` subcommands.
func k8sCommands() []command {
	return []command{{name: "manifest", run: k8sManifest, summary: "write the Kubernetes Indexed Job"}}
}

func runK8s(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf("k8s: want a subcommand: manifest (see `oltplab k8s --help`)")
	}
	if c, ok := findCommand(k8sCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(a.out(), "Usage: oltplab %s\n\n%s", k8sSynopsis, k8sHelp)
		return nil
	}
	return usageErrorf("k8s: unknown subcommand %q (want manifest)", args[0])
}

const k8sHelp = `Writes a Kubernetes Indexed Job that runs "oltplab run" as N shards, one pod
each: pod I runs --shard I/N (I is its completion index), so the N drivers
share each step's virtual users and the warehouses. The database password
comes from a Secret mounted as a file (the manifest only names it):
  kubectl create secret generic oltplab-db --from-literal=password=...
Flags after "--" go to every shard's "oltplab run" and are checked here.
With a PostgreSQL results store the shards share (--results, its password
from another Secret, --results-password-secret) and either --start-at (every
pod starts its ramp-up at that instant) or --shard-group (the pods meet in
the store and start together once all are there, however late each was
scheduled), shard 0 merges the shards into one profile (histograms added,
NOPM from the database); without them each pod stores its own result, lost
with the pod.
See docs/kubernetes.md.
`

// k8sManifest writes the Job.
func k8sManifest(ctx context.Context, a *app, args []string) error {
	o := k8s.JobOptions{}
	var output string
	fs := newFlagSet("k8s manifest")
	fs.StringVar(&o.Name, "name", "oltplab", "`NAME` of the Job (lowercase letters, digits and -)")
	fs.StringVar(&o.Namespace, "namespace", "", "`NAMESPACE` of the Job (default: kubectl's)")
	fs.StringVar(&o.Image, "image", "", "container `IMAGE` holding the oltplab binary as its entrypoint (required; `make image` in oltplab's source builds one, docs/kubernetes.md)")
	fs.IntVar(&o.Shards, "shards", 0, "`N` pods, one per shard (required; each step's virtual users and the warehouses must be at least N)")
	fs.StringVar(&o.Target, "target", "", "database `URL` as the pods reach it, without a password (required)")
	fs.StringVar(&o.PasswordSecret, "password-secret", "", "`NAME` of the Secret holding the database password (mounted as a file, passed with --password-file)")
	fs.StringVar(&o.PasswordKey, "password-key", "password", "`KEY` of the password in that Secret")
	fs.StringVar(&o.StartAt, "start-at", "", "`TIME` (RFC 3339) every shard starts its ramp-up (run --start-at); needs --results")
	fs.StringVar(&o.ShardGroup, "shard-group", "", "`NAME` of this run's shards (run --shard-group): without --start-at they meet in the results store "+
		"and start together once all N pods are there; needs --results. Give each run its own")
	fs.StringVar(&o.Results, "results", "", "PostgreSQL results store `URL` the shards share, without a password (postgres://USER@HOST:PORT/DB)")
	fs.StringVar(&o.ResultsPasswordSecret, "results-password-secret", "", "`NAME` of the Secret holding the results store's password (mounted as a file, read through OLTPLAB_RESULTS_PASSWORD_FILE)")
	fs.StringVar(&o.ResultsPasswordKey, "results-password-key", "password", "`KEY` of the password in that Secret")
	fs.StringVar(&o.CPU, "cpu", "1", "CPU `QUANTITY` each pod requests (e.g. 500m, 2)")
	fs.StringVar(&o.Memory, "memory", "512Mi", "memory `QUANTITY` each pod requests and is limited to")
	fs.IntVar(&o.MetricsPort, "metrics-port", 9464, "`PORT` of each pod's live metrics (run --metrics-listen), annotated for Prometheus; 0: none")
	fs.StringVarP(&output, "output", "o", "", "write the manifest to `FILE` (default: standard output)")
	// Everything after "--" is the shards' run flags.
	runArgs := []string{}
	if i := slices.Index(args, "--"); i >= 0 {
		args, runArgs = args[:i], args[i+1:]
	}
	if err := a.parseFlags(fs, k8sSynopsis, args); err != nil {
		return helpOK(err)
	}
	if o.Target == "" {
		return usageErrorf("k8s manifest: --target is required")
	}
	tg, err := dialect.ParseTarget(o.Target, "")
	if err != nil {
		return usageErrorf("k8s manifest: --target: %v", err)
	}
	if tg.PasswordSet {
		a.secrets = append(a.secrets, tg.Password)
		return usageErrorf("k8s manifest: --target holds a password: the manifest must not; put it in a Secret and name it with --password-secret")
	}
	if o.StartAt != "" {
		t, err := time.Parse(time.RFC3339, o.StartAt)
		if err != nil {
			return usageErrorf("k8s manifest: --start-at %s: want an RFC 3339 instant, e.g. 2026-11-25T10:00:00Z", quoted(o.StartAt))
		}
		if t.Before(time.Now()) {
			return withCode(exitStartAt, fmt.Errorf("k8s manifest: --start-at %s has passed: give the instant the pods will all be running by", o.StartAt))
		}
	}
	if o.ShardGroup != "" && checkLabel("k8s manifest", o.ShardGroup) != nil {
		return usageErrorf("k8s manifest: --shard-group %s holds control characters or is too long", quoted(o.ShardGroup))
	}
	if o.Results != "" {
		rt, err := dialect.ParseTarget(o.Results, "")
		switch {
		case !store.IsPostgresURL(o.Results) || err != nil:
			return usageErrorf("k8s manifest: --results: want a postgres://USER@HOST:PORT/DB URL the pods reach (a file would stay in each pod)")
		case rt.PasswordSet:
			a.secrets = append(a.secrets, rt.Password)
			return usageErrorf("k8s manifest: --results holds a password: the manifest must not; put it in a Secret and name it with --results-password-secret")
		}
	}
	if err := checkShardRunArgs(a, runArgs, o.Shards); err != nil {
		return err
	}
	o.RunArgs = runArgs
	if err := o.Validate(); err != nil {
		return usageErrorf("k8s manifest: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	write := func(w io.Writer) error { return k8s.Write(w, o) }
	if output == "" {
		return write(a.out())
	}
	if err := writeFileAtomic(ctx, output, write); err != nil {
		return err
	}
	fmt.Fprintf(a.errw(), "manifest written to %s: kubectl apply -f %s\n", output, output)
	return nil
}

// checkShardRunArgs parses the shards' run flags as `oltplab run` would,
// refusing those the manifest sets itself.
func checkShardRunArgs(a *app, args []string, shards int) error {
	var ro runOptions
	fs := newFlagSet("run")
	ro.register(fs, &app{env: Env{}})
	registerMetrics(fs, &ro.metricsListen)
	fs.StringVar(&ro.shard, "shard", "", "")
	registerShardFlags(fs, &ro)
	if err := fs.Parse(args); err != nil {
		return usageErrorf("k8s manifest: run flags after --: %v", err)
	}
	if len(fs.Args()) > 0 {
		return usageErrorf("k8s manifest: run flags after --: unexpected argument %q", fs.Args()[0])
	}
	for _, own := range []string{"target", "password-file", "shard", "metrics-listen", "help", "start-at", "shard-group"} {
		if fs.Changed(own) {
			return usageErrorf("k8s manifest: --%s after --: the manifest sets it", own)
		}
	}
	if ro.reset {
		return usageErrorf("k8s manifest: --reset-between does not go with shards: each would reset the database under the others")
	}
	ro.target.target = "sqlite:unused"
	if err := ro.validate(); err != nil {
		return usageErrorf("k8s manifest: run flags after --: %v", err)
	}
	for _, vus := range ro.steps {
		if shards > 0 && vus < shards {
			return usageErrorf("k8s manifest: a step of %d virtual user(s) cannot be split over %d shards", vus, shards)
		}
	}
	return nil
}
