package k8s

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

func options() JobOptions {
	return JobOptions{
		Name: "tpcc-4", Namespace: "bench", Image: "registry.example/oltplab:1.0", Shards: 4,
		Target: "postgres://bench@db.example:5432/tpcc", PasswordSecret: "oltplab-db", PasswordKey: "password",
		RunArgs: []string{"--vus", "8,16", "--duration", "5m"}, CPU: "500m", Memory: "1Gi", MetricsPort: 9464,
	}
}

// strictJob decodes a manifest as the API server does in strict mode:
// YAML to JSON (duplicate keys refused), then case-sensitive decoding into
// the official Job type with unknown and duplicate fields refused.
func strictJob(raw []byte) (batchv1.Job, error) {
	var job batchv1.Job
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return job, err
	}
	strict, err := kjson.UnmarshalStrict(js, &job, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return job, err
	}
	return job, errors.Join(strict...)
}

// decode reads a manifest strictly into the official Job type: an
// unknown or misspelt field, or a wrong type, is an error.
func decode(t *testing.T, raw []byte) batchv1.Job {
	t.Helper()
	job, err := strictJob(raw)
	if err != nil {
		t.Fatalf("strict decoding into batch/v1 Job: %v\n%s", err, raw)
	}
	return job
}

// TestJobDecodesStrictly: the manifest is a valid Indexed Job in the
// official API types, with one pod per shard, the completion index in
// --shard, the password only as a Secret reference, and the requests.
func TestJobDecodesStrictly(t *testing.T) {
	o := options()
	var buf bytes.Buffer
	if err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	job := decode(t, buf.Bytes())
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != o.Name || job.Namespace != o.Namespace {
		t.Errorf("object %s %s %s/%s, want batch/v1 Job %s/%s", job.APIVersion, job.Kind, job.Namespace, job.Name, o.Namespace, o.Name)
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completion mode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != 4 || s.Parallelism == nil || *s.Parallelism != 4 {
		t.Errorf("completions %v, parallelism %v, want 4 and 4", s.Completions, s.Parallelism)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("backoff limit %v, want 0", s.BackoffLimit)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || len(ps.Containers) != 1 {
		t.Fatalf("pod: restart %s, %d containers; want Never and 1", ps.RestartPolicy, len(ps.Containers))
	}
	c := ps.Containers[0]
	i := slices.Index(c.Args, "--shard")
	if i < 0 || c.Args[i+1] != "$(SHARD_INDEX)/4" {
		t.Errorf("args %q: want --shard $(SHARD_INDEX)/4", c.Args)
	}
	var index *corev1.EnvVar
	for k := range c.Env {
		if c.Env[k].Name == "SHARD_INDEX" {
			index = &c.Env[k]
		}
	}
	if index == nil || index.ValueFrom == nil || index.ValueFrom.FieldRef == nil ||
		index.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("SHARD_INDEX env %+v: want the completion index annotation", index)
	}
	if got := c.Resources.Requests.Cpu().String(); got != "500m" {
		t.Errorf("cpu request %s, want 500m", got)
	}
	if got := c.Resources.Requests.Memory().String(); got != "1Gi" || c.Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("memory request %s, limit %s; want 1Gi both", got, c.Resources.Limits.Memory())
	}
	var secret *corev1.SecretVolumeSource
	for _, v := range ps.Volumes {
		if v.Secret != nil {
			secret = v.Secret
		}
	}
	if secret == nil || secret.SecretName != "oltplab-db" || len(secret.Items) != 1 || secret.Items[0].Key != "password" {
		t.Errorf("secret volume %+v: want oltplab-db's key password", secret)
	}
	pf := slices.Index(c.Args, "--password-file")
	if pf < 0 || c.Args[pf+1] != PasswordDir+"/"+secret.Items[0].Path {
		t.Errorf("args %q: want --password-file at the Secret's mount", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9464 || s.Template.Annotations["prometheus.io/port"] != "9464" {
		t.Errorf("metrics port %+v, annotations %v; want 9464", c.Ports, s.Template.Annotations)
	}
}

// TestStrictDecodingCatchesMistakes: the check above can fail.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, options()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to string }{
		{"completionMode:", "completionmode:"},
		{"completions: 4", "completions: four"},
		{"secretName:", "secretname:"},
		{"cpu: 500m", "cpu: 500 millicores"},
	} {
		bad := strings.Replace(buf.String(), c.from, c.to, 1)
		if bad == buf.String() {
			t.Fatalf("%q not in the manifest", c.from)
		}
		if _, err := strictJob([]byte(bad)); err == nil {
			t.Errorf("%q -> %q decoded without error", c.from, c.to)
		}
	}
}

func TestJobValidate(t *testing.T) {
	cases := map[string]func(*JobOptions){
		"name with capitals": func(o *JobOptions) { o.Name = "TPCC" },
		"no image":           func(o *JobOptions) { o.Image = "" },
		"no shards":          func(o *JobOptions) { o.Shards = 0 },
		"bad cpu":            func(o *JobOptions) { o.CPU = "two" },
		"bad memory":         func(o *JobOptions) { o.Memory = "1 GB" },
		"bad secret":         func(o *JobOptions) { o.PasswordSecret = "My_Secret" },
		"no key":             func(o *JobOptions) { o.PasswordKey = "" },
		"bad port":           func(o *JobOptions) { o.MetricsPort = 70000 },
	}
	for name, mutate := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			o := options()
			mutate(&o)
			if err := Write(&bytes.Buffer{}, o); err == nil {
				t.Errorf("no error")
			}
		})
	}
	o := options()
	o.PasswordSecret, o.MetricsPort = "", 0
	var buf bytes.Buffer
	if err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	job := decode(t, buf.Bytes())
	if args := job.Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--password-file") || slices.Contains(args, "--metrics-listen") {
		t.Errorf("args %q: no password file or metrics without a secret or port", args)
	}
}

// TestJobSharedStart: with a start instant the shards get --start-at and
// the shared results store, its password only as a Secret reference; a
// start without a shared store is refused.
func TestJobSharedStart(t *testing.T) {
	o := options()
	o.StartAt = "2026-11-25T10:00:00Z"
	o.Results = "postgres://oltplab@results.example:5432/oltplab"
	o.ResultsPasswordSecret, o.ResultsPasswordKey = "oltplab-results", "password"
	var buf bytes.Buffer
	if err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	job := decode(t, buf.Bytes())
	c := job.Spec.Template.Spec.Containers[0]
	if i := slices.Index(c.Args, "--start-at"); i < 0 || c.Args[i+1] != o.StartAt {
		t.Errorf("args %q: want --start-at %s", c.Args, o.StartAt)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["OLTPLAB_RESULTS"] != o.Results || env["OLTPLAB_RESULTS_PASSWORD_FILE"] != ResultsPasswordDir+"/"+PasswordFile {
		t.Errorf("env %v: want the shared store and its password file", env)
	}
	var secret *corev1.SecretVolumeSource
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "oltplab-results" {
			secret = v.Secret
		}
	}
	if secret == nil || len(secret.Items) != 1 || secret.Items[0].Key != "password" || secret.Items[0].Path != PasswordFile {
		t.Errorf("results password volume %+v: want oltplab-results' key password", secret)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || m.MountPath == ResultsPasswordDir && m.ReadOnly
	}
	if !mounted {
		t.Errorf("mounts %+v: want the results password read-only at %s", c.VolumeMounts, ResultsPasswordDir)
	}

	o.Results, o.ResultsPasswordSecret = "", ""
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "start at") {
		t.Errorf("a start without a shared store: %v, want refused", err)
	}
}

// TestJobRendezvous: a shard group without a start instant reaches every
// shard, and needs the shared store.
func TestJobRendezvous(t *testing.T) {
	o := options()
	o.ShardGroup = "rds-8x-1"
	o.Results = "postgres://oltplab@results.example:5432/oltplab"
	var buf bytes.Buffer
	if err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	c := decode(t, buf.Bytes()).Spec.Template.Spec.Containers[0]
	if i := slices.Index(c.Args, "--shard-group"); i < 0 || c.Args[i+1] != o.ShardGroup || slices.Contains(c.Args, "--start-at") {
		t.Errorf("args %q: want --shard-group %s and no --start-at", c.Args, o.ShardGroup)
	}
	o.Results = ""
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "shard group") {
		t.Errorf("a shard group without a shared store: %v, want refused", err)
	}
}
