package experiment

import (
	"context"
	"errors"
	"log/slog"

	"github.com/oltplab/oltplab/internal/dialect"
)

// InstanceSpec is the part of a target that describes a managed
// instance, with the plan's field names.
type InstanceSpec struct {
	Name           string            `yaml:"name" json:"name"`
	Engine         string            `yaml:"engine" json:"engine"`
	DataDir        string            `yaml:"data_dir" json:"data_dir"`
	WALDir         string            `yaml:"wal_dir" json:"wal_dir,omitempty"`
	Memory         string            `yaml:"memory" json:"memory,omitempty"`
	MemoryLimit    string            `yaml:"memory_limit" json:"memory_limit,omitempty"`
	CPUs           string            `yaml:"cpus" json:"cpus,omitempty"`
	IOLimit        IOLimit           `yaml:"io_limit" json:"io_limit,omitempty"`
	Settings       map[string]string `yaml:"settings" json:"settings,omitempty"`
	MaxConnections int               `yaml:"max_connections" json:"max_connections,omitempty"`
	BinDir         string            `yaml:"bin_dir" json:"bin_dir,omitempty"`
}

// IOLimit caps a managed instance's I/O on the device under its data.
type IOLimit struct {
	ReadIOPS  int64   `yaml:"read_iops" json:"read_iops,omitempty"`
	WriteIOPS int64   `yaml:"write_iops" json:"write_iops,omitempty"`
	ReadMBps  float64 `yaml:"read_mbps" json:"read_mbps,omitempty"`
	WriteMBps float64 `yaml:"write_mbps" json:"write_mbps,omitempty"`
}

// setFields names the instance fields a target sets.
func (s InstanceSpec) setFields() []string { return setFields(s) }

// errNoManaged: this build cannot start managed instances.
var errNoManaged = errors.New("managed instances are not available in this build")

// startManaged starts the managed instance of t and returns its target,
// its description and how to stop it.
func startManaged(ctx context.Context, t *TargetSpec, log *slog.Logger) (dialect.Target, any, func(context.Context) error, error) {
	return dialect.Target{}, nil, nil, errNoManaged
}

// validateManaged checks a managed target against the host.
func validateManaged(t *TargetSpec) error { return errNoManaged }
