package k8s

// The subset of the Kubernetes API this package writes, with the API's
// field names (the tests decode it strictly into k8s.io/api's types).

type jobManifest struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   meta    `yaml:"metadata"`
	Spec       jobSpec `yaml:"spec"`
}

type meta struct {
	Name        string            `yaml:"name,omitempty"`
	Namespace   string            `yaml:"namespace,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type jobSpec struct {
	CompletionMode string      `yaml:"completionMode"`
	Completions    int         `yaml:"completions"`
	Parallelism    int         `yaml:"parallelism"`
	BackoffLimit   *int        `yaml:"backoffLimit"`
	Template       podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata meta    `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy   string       `yaml:"restartPolicy"`
	SecurityContext *podSecurity `yaml:"securityContext,omitempty"`
	Containers      []container  `yaml:"containers"`
	Volumes         []volume     `yaml:"volumes,omitempty"`
}

type podSecurity struct {
	RunAsNonRoot   bool     `yaml:"runAsNonRoot"`
	RunAsUser      int      `yaml:"runAsUser"`
	FSGroup        int      `yaml:"fsGroup"`
	SeccompProfile *seccomp `yaml:"seccompProfile,omitempty"`
}

type seccomp struct {
	Type string `yaml:"type"`
}

type container struct {
	Name            string             `yaml:"name"`
	Image           string             `yaml:"image"`
	Args            []string           `yaml:"args"`
	Env             []envVar           `yaml:"env,omitempty"`
	Ports           []containerPort    `yaml:"ports,omitempty"`
	Resources       resources          `yaml:"resources"`
	SecurityContext *containerSecurity `yaml:"securityContext,omitempty"`
	VolumeMounts    []volumeMount      `yaml:"volumeMounts,omitempty"`
}

type envVar struct {
	Name      string     `yaml:"name"`
	Value     string     `yaml:"value,omitempty"`
	ValueFrom *envSource `yaml:"valueFrom,omitempty"`
}

type envSource struct {
	FieldRef *fieldRef `yaml:"fieldRef,omitempty"`
}

type fieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type resources struct {
	Requests map[string]string `yaml:"requests,omitempty"`
	Limits   map[string]string `yaml:"limits,omitempty"`
}

type containerSecurity struct {
	AllowPrivilegeEscalation bool          `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool          `yaml:"readOnlyRootFilesystem"`
	Capabilities             *capabilities `yaml:"capabilities,omitempty"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type volume struct {
	Name     string        `yaml:"name"`
	EmptyDir *struct{}     `yaml:"emptyDir,omitempty"`
	Secret   *secretVolume `yaml:"secret,omitempty"`
}

type secretVolume struct {
	SecretName  string      `yaml:"secretName"`
	DefaultMode *int        `yaml:"defaultMode,omitempty"`
	Items       []keyToPath `yaml:"items,omitempty"`
}

type keyToPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}
