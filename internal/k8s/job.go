package k8s

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// PasswordDir is where the Secret's password is mounted in each pod;
// `oltplab run --password-file` reads PasswordDir/PasswordFile.
const (
	PasswordDir  = "/var/run/secrets/oltplab"
	PasswordFile = "password"
	// ResultsDir is the pod's writable directory (an emptyDir) for a
	// results store file.
	ResultsDir = "/results"
	// ResultsPasswordDir is where the results store's password is
	// mounted; OLTPLAB_RESULTS_PASSWORD_FILE names the file in it.
	ResultsPasswordDir = "/var/run/secrets/oltplab-results"
	// IndexAnnotation is where Kubernetes puts a pod's completion index.
	IndexAnnotation = "batch.kubernetes.io/job-completion-index"
)

// JobOptions describe the Job.
type JobOptions struct {
	Name      string // the Job's name (DNS-1123 label)
	Namespace string // optional
	Image     string // the oltplab container image
	Shards    int    // pods, one per shard
	Target    string // database URL without a password
	// PasswordSecret and PasswordKey name the Secret and key holding the
	// database password; empty Secret: no password mounted.
	PasswordSecret, PasswordKey string
	// StartAt, when set, is the RFC 3339 instant every shard starts its
	// ramp-up (run --start-at), however late its pod was scheduled; the
	// shards then merge into one profile in the results store they share
	// (Results), so it needs Results.
	StartAt string
	// ShardGroup, when set, names the run's shards (run --shard-group);
	// without StartAt they meet in the shared results store and start
	// together once all have arrived, however far apart their pods were
	// scheduled. It needs Results too.
	ShardGroup string
	// Results is a PostgreSQL results store URL (without a password) the
	// shards share; empty: each pod keeps its own store file in
	// ResultsDir, lost with the pod. ResultsPasswordSecret and
	// ResultsPasswordKey name the Secret and key of its password.
	Results                                   string
	ResultsPasswordSecret, ResultsPasswordKey string
	// RunArgs are `oltplab run` flags every shard gets (--vus, --duration,
	// --label, --results ...), already checked by the caller.
	RunArgs []string
	// CPU and Memory are each pod's requests (Kubernetes quantities); the
	// memory request is also its limit.
	CPU, Memory string
	// MetricsPort, when not 0, serves live metrics on all the pod's
	// interfaces at that port, annotated for Prometheus' pod discovery.
	MetricsPort int
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// quantity is the shape of a Kubernetes quantity (k8s.io/apimachinery
	// resource.ParseQuantity decides in the tests).
	quantity = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)
)

// Validate checks the options; each error names the flag's subject.
func (o JobOptions) Validate() error {
	var errs []error
	if len(o.Name) > 52 || !dnsLabel.MatchString(o.Name) { // 63 minus the pods' suffixes
		errs = append(errs, fmt.Errorf("name %q: want lowercase letters, digits and '-', at most 52 characters", o.Name))
	}
	if o.Namespace != "" && (len(o.Namespace) > 63 || !dnsLabel.MatchString(o.Namespace)) {
		errs = append(errs, fmt.Errorf("namespace %q: want a DNS label", o.Namespace))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("image: the oltplab container image is required"))
	}
	if o.Shards < 1 || o.Shards > 10000 {
		errs = append(errs, fmt.Errorf("shards: want 1 to 10000, got %d", o.Shards))
	}
	if o.PasswordSecret != "" && !dnsLabel.MatchString(o.PasswordSecret) {
		errs = append(errs, fmt.Errorf("password secret %q: want a Kubernetes object name", o.PasswordSecret))
	}
	if o.PasswordSecret != "" && o.PasswordKey == "" {
		errs = append(errs, errors.New("password key: name the Secret's key"))
	}
	if o.ResultsPasswordSecret != "" && (!dnsLabel.MatchString(o.ResultsPasswordSecret) || o.ResultsPasswordKey == "") {
		errs = append(errs, fmt.Errorf("results password secret %q (key %q): want a Kubernetes object name and a key", o.ResultsPasswordSecret, o.ResultsPasswordKey))
	}
	if o.ResultsPasswordSecret != "" && o.Results == "" {
		errs = append(errs, errors.New("results password secret: goes with a shared results store (results)"))
	}
	if o.ShardGroup != "" && o.Results == "" {
		errs = append(errs, errors.New("shard group: the shards meet in the results store they share: name it (results)"))
	}
	if o.StartAt != "" && o.Results == "" {
		errs = append(errs, errors.New("start at: the shards merge in the results store they share: name it (results)"))
	}
	for what, q := range map[string]string{"cpu": o.CPU, "memory": o.Memory} {
		if !quantity.MatchString(q) {
			errs = append(errs, fmt.Errorf("%s %q: want a Kubernetes quantity such as 2, 500m, 1Gi", what, q))
		}
	}
	if o.MetricsPort < 0 || o.MetricsPort > 65535 {
		errs = append(errs, fmt.Errorf("metrics port %d: want 0 to 65535", o.MetricsPort))
	}
	return errors.Join(errs...)
}

// Args are the container's arguments: `oltplab run` as shard
// $(SHARD_INDEX)/N, which Kubernetes expands from the pod's completion
// index.
func (o JobOptions) Args() []string {
	args := []string{"run", "--target", o.Target, "--shard", "$(SHARD_INDEX)/" + strconv.Itoa(o.Shards)}
	if o.PasswordSecret != "" {
		args = append(args, "--password-file", PasswordDir+"/"+PasswordFile)
	}
	if o.MetricsPort != 0 {
		args = append(args, "--metrics-listen", ":"+strconv.Itoa(o.MetricsPort))
	}
	if o.StartAt != "" {
		args = append(args, "--start-at", o.StartAt)
	}
	if o.ShardGroup != "" {
		args = append(args, "--shard-group", o.ShardGroup)
	}
	return append(args, o.RunArgs...)
}

// Write writes the Job as YAML.
func Write(w io.Writer, o JobOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	labels := map[string]string{"app.kubernetes.io/name": "oltplab", "app.kubernetes.io/instance": o.Name}
	pod := podTemplate{
		Metadata: meta{Labels: labels},
		Spec: podSpec{
			RestartPolicy: "Never",
			SecurityContext: &podSecurity{RunAsNonRoot: true, RunAsUser: 65532, FSGroup: 65532,
				SeccompProfile: &seccomp{Type: "RuntimeDefault"}},
			Containers: []container{{
				Name:  "oltplab",
				Image: o.Image,
				Args:  o.Args(),
				Env: []envVar{
					{Name: "SHARD_INDEX", ValueFrom: &envSource{FieldRef: &fieldRef{FieldPath: "metadata.annotations['" + IndexAnnotation + "']"}}},
					{Name: "HOME", Value: ResultsDir},
					{Name: "OLTPLAB_RESULTS", Value: ResultsDir + "/results.db"},
				},
				Resources: resources{
					Requests: map[string]string{"cpu": o.CPU, "memory": o.Memory},
					Limits:   map[string]string{"memory": o.Memory},
				},
				SecurityContext: &containerSecurity{AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true,
					Capabilities: &capabilities{Drop: []string{"ALL"}}},
				VolumeMounts: []volumeMount{{Name: "results", MountPath: ResultsDir}},
			}},
			Volumes: []volume{{Name: "results", EmptyDir: &struct{}{}}},
		},
	}
	c := &pod.Spec.Containers[0]
	if o.PasswordSecret != "" {
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: "db-password", MountPath: PasswordDir, ReadOnly: true})
		mode := 0o440
		pod.Spec.Volumes = append(pod.Spec.Volumes, volume{Name: "db-password", Secret: &secretVolume{
			SecretName: o.PasswordSecret, DefaultMode: &mode, Items: []keyToPath{{Key: o.PasswordKey, Path: PasswordFile}}}})
	}
	if o.Results != "" {
		for i := range c.Env {
			if c.Env[i].Name == "OLTPLAB_RESULTS" {
				c.Env[i].Value = o.Results
			}
		}
	}
	if o.ResultsPasswordSecret != "" {
		c.Env = append(c.Env, envVar{Name: "OLTPLAB_RESULTS_PASSWORD_FILE", Value: ResultsPasswordDir + "/" + PasswordFile})
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: "results-password", MountPath: ResultsPasswordDir, ReadOnly: true})
		mode := 0o440
		pod.Spec.Volumes = append(pod.Spec.Volumes, volume{Name: "results-password", Secret: &secretVolume{
			SecretName: o.ResultsPasswordSecret, DefaultMode: &mode, Items: []keyToPath{{Key: o.ResultsPasswordKey, Path: PasswordFile}}}})
	}
	if o.MetricsPort != 0 {
		c.Ports = []containerPort{{Name: "metrics", ContainerPort: o.MetricsPort, Protocol: "TCP"}}
		pod.Metadata.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(o.MetricsPort),
			"prometheus.io/path": "/metrics"}
	}
	zero := 0
	job := jobManifest{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   meta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: jobSpec{
			CompletionMode: "Indexed",
			Completions:    o.Shards,
			Parallelism:    o.Shards,
			// A shard that fails is not run again: a late rerun would
			// measure a different window than the others.
			BackoffLimit: &zero,
			Template:     pod,
		},
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return fmt.Errorf("write the job manifest: %w", err)
	}
	return enc.Close()
}
