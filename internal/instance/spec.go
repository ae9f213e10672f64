package instance

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/oltplab/oltplab/internal/latency"
)

// Engine names the database an instance runs.
type Engine string

const (
	Postgres Engine = "postgres" // PostgreSQL (15 preferred)
	MariaDB  Engine = "mariadb"  // MariaDB (MySQL wire)
	SQLite   Engine = "sqlite"   // embedded: no server, same data_dir and memory
)

// Engines lists the engines an instance can run.
func Engines() []Engine { return []Engine{Postgres, MariaDB, SQLite} }

// Embedded reports whether the engine runs inside oltplab (no server
// process: no connections to size, no cgroup controls).
func (e Engine) Embedded() bool {
	eng, ok := engines[e]
	return ok && !eng.server()
}

// UnmarshalText accepts the engine names and the usual aliases
// (postgresql, mysql); empty stays empty (Validate requires an engine).
func (e *Engine) UnmarshalText(b []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "":
		*e = ""
	case "postgres", "postgresql", "pg":
		*e = Postgres
	case "mariadb", "mysql":
		*e = MariaDB
	case "sqlite", "sqlite3":
		*e = SQLite
	default:
		return fmt.Errorf("engine %q: want postgres, mariadb or sqlite", string(b))
	}
	return nil
}

// IOLimit caps the I/O of the server on each block device under its
// directories: the storage what-if, a slower disk emulated on the disk at
// hand. Zero means no cap. MB/s are 10^6 bytes per second, as oltplab's
// monitor reports them.
type IOLimit struct {
	ReadIOPS  int64   `yaml:"read_iops,omitempty" json:"read_iops,omitempty"`
	WriteIOPS int64   `yaml:"write_iops,omitempty" json:"write_iops,omitempty"`
	ReadMBps  float64 `yaml:"read_mbps,omitempty" json:"read_mbps,omitempty"`
	WriteMBps float64 `yaml:"write_mbps,omitempty" json:"write_mbps,omitempty"`
}

// IsZero reports whether no cap is set.
func (l IOLimit) IsZero() bool { return l == IOLimit{} }

// ReadBytesPerSec is the read cap in bytes per second (0 = none).
func (l IOLimit) ReadBytesPerSec() int64 { return int64(l.ReadMBps * 1e6) }

// WriteBytesPerSec is the write cap in bytes per second (0 = none).
func (l IOLimit) WriteBytesPerSec() int64 { return int64(l.WriteMBps * 1e6) }

func (l IOLimit) String() string {
	var parts []string
	add := func(name string, v float64, unit string) {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %g%s", name, v, unit))
		}
	}
	add("read", float64(l.ReadIOPS), " IOPS")
	add("write", float64(l.WriteIOPS), " IOPS")
	add("read", l.ReadMBps, " MB/s")
	add("write", l.WriteMBps, " MB/s")
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Spec describes an instance: the engine, where its data lives and the
// infrastructure it is given. The yaml names are the plan file's.
type Spec struct {
	// Name identifies the instance among those running (letters, digits,
	// '.', '_', '-'); empty means the engine's name.
	Name   string `yaml:"name,omitempty" json:"name"`
	Engine Engine `yaml:"engine,omitempty" json:"engine"`
	// DataDir is where the data lives: the storage under test. It is
	// created when missing; the engine's files go to DataDir/<engine> and
	// its log to DataDir/<engine>.log. An initialised directory is reused.
	DataDir string `yaml:"data_dir,omitempty" json:"data_dir"`
	// WALDir, optional, holds the WAL (PostgreSQL) or redo log (MariaDB).
	WALDir string `yaml:"wal_dir,omitempty" json:"wal_dir,omitempty"`
	// Memory is the buffer pool (shared_buffers, innodb_buffer_pool_size)
	// or SQLite's page cache; 0 keeps the engine's default.
	Memory Size `yaml:"memory,omitempty" json:"memory,omitempty"`
	// MemoryLimit caps the memory of the server's processes, page cache
	// included (cgroup memory), so that a small buffer pool really reads
	// from the device; 0 = no limit.
	MemoryLimit Size `yaml:"memory_limit,omitempty" json:"memory_limit,omitempty"`
	// CPUs is a Linux CPU list ("0", "0-1"): the cores the server may use.
	// Empty means no limit.
	CPUs    string  `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	IOLimit IOLimit `yaml:"io_limit,omitempty" json:"io_limit,omitempty"`
	// Settings are further server settings (postgresql.conf names, MariaDB
	// option names); they override oltplab's defaults. Validate refuses, in
	// every spelling the server accepts, those that would undo the
	// instance's isolation (listening, port, socket, authentication, file
	// locations, loaded code) and those oltplab sets from the fields above
	// (refused.go).
	Settings map[string]string `yaml:"settings,omitempty" json:"settings,omitempty"`
	// Port is the loopback TCP port the server listens on; 0 (the
	// default) takes a free one at each start. A port another process
	// listens on is refused, never shared.
	Port int `yaml:"port,omitempty" json:"port,omitempty"`
	// MaxConnections is how many client connections oltplab will open (the
	// largest VU step of a plan, plus loaders); the server accepts
	// ConnectionReserve more for samplers, administration and backups.
	// 0 keeps the engine's default.
	MaxConnections int `yaml:"max_connections,omitempty" json:"max_connections,omitempty"`
	// BinDir, optional, is where the server binaries are (e.g.
	// /usr/lib/postgresql/15/bin); found automatically when empty.
	BinDir string `yaml:"bin_dir,omitempty" json:"bin_dir,omitempty"`
	// Latency, when set, puts data_dir and wal_dir (or the one its On
	// names) on a latency layer (internal/latency) with these delays; a
	// zero value is the layer with zero delays, the baseline of tiers
	// that differ only in their delays. Server engines only, as root,
	// not with io_limit. In a plan: `latency: {read: 4ms, fsync: 6ms}` or
	// `latency: read=4ms,fsync=6ms`, `latency: 0` for zero delays.
	Latency *latency.Settings `yaml:"latency,omitempty" json:"latency,omitempty"`

	// login, set by a restore, is how oltplab enters a copy of a cluster
	// it does not manage (postgres_backup.go); nil: as its own role.
	login *restoredLogin
}

// ConnectionReserve is the number of connections a server accepts beyond
// Spec.MaxConnections.
const ConnectionReserve = 10

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

// InstanceName is the spec's name, or the engine's when none is given.
func (s Spec) InstanceName() string {
	if s.Name != "" {
		return s.Name
	}
	return string(s.Engine)
}

// Validate checks the spec against itself and the host: everything that
// can be known without touching directories, binaries or cgroups. Errors
// are *Error of KindSpec or KindCPUs.
func (s Spec) Validate(h Host) error {
	if s.Name != "" && !namePattern.MatchString(s.Name) {
		return errorf(KindSpec, "instance name %q: want 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit", s.Name)
	}
	eng, ok := engines[s.Engine]
	if !ok {
		return errorf(KindSpec, "engine %q: want postgres, mariadb or sqlite", s.Engine)
	}
	if strings.TrimSpace(s.DataDir) == "" {
		return errorf(KindSpec, "instance %s: data_dir is required", s.InstanceName())
	}
	if s.Memory < 0 || s.MemoryLimit < 0 {
		return errorf(KindSpec, "instance %s: memory and memory_limit must not be negative", s.InstanceName())
	}
	if s.MaxConnections < 0 || s.MaxConnections > 100000 {
		return errorf(KindSpec, "instance %s: max_connections %d: want 0 (engine default) to 100000", s.InstanceName(), s.MaxConnections)
	}
	if s.Port < 0 || s.Port > 65535 {
		return errorf(KindSpec, "instance %s: port %d: want 1 to 65535, or 0 for a free one", s.InstanceName(), s.Port)
	}
	l := s.IOLimit
	if l.ReadIOPS < 0 || l.WriteIOPS < 0 || l.ReadMBps < 0 || l.WriteMBps < 0 {
		return errorf(KindSpec, "instance %s: io_limit values must not be negative", s.InstanceName())
	}
	if (l.ReadMBps > 0 && l.ReadBytesPerSec() < 1) || (l.WriteMBps > 0 && l.WriteBytesPerSec() < 1) {
		return errorf(KindSpec, "instance %s: io_limit MB/s too small", s.InstanceName())
	}
	if !eng.server() {
		var extra []string
		if s.WALDir != "" {
			extra = append(extra, "wal_dir")
		}
		if s.MemoryLimit != 0 {
			extra = append(extra, "memory_limit")
		}
		if s.CPUs != "" {
			extra = append(extra, "cpus")
		}
		if !l.IsZero() {
			extra = append(extra, "io_limit")
		}
		if len(s.Settings) > 0 {
			extra = append(extra, "settings")
		}
		if s.MaxConnections != 0 {
			extra = append(extra, "max_connections")
		}
		if s.Port != 0 {
			extra = append(extra, "port")
		}
		if s.Latency != nil {
			// The layer's process would serve oltplab's own I/O.
			extra = append(extra, "latency")
		}
		if len(extra) > 0 {
			return errorf(KindSpec, "instance %s: %s embedded in oltplab takes only data_dir and memory, not %s",
				s.InstanceName(), s.Engine, strings.Join(extra, ", "))
		}
		return nil
	}
	if err := s.validateLatency(); err != nil {
		return err
	}
	if s.MemoryLimit != 0 && s.MemoryLimit <= s.Memory {
		return errorf(KindSpec, "instance %s: memory_limit %s must exceed memory %s (the buffer pool lives inside the limit)",
			s.InstanceName(), s.MemoryLimit, s.Memory)
	}
	if s.CPUs != "" {
		cpus, err := ParseCPUList(s.CPUs)
		if err != nil {
			return errorf(KindSpec, "instance %s: cpus: %v", s.InstanceName(), err)
		}
		if len(cpus) == 0 {
			return errorf(KindSpec, "instance %s: cpus %q names no CPU", s.InstanceName(), s.CPUs)
		}
		if missing := cpus.Without(h.CPUs); len(missing) > 0 {
			return errorf(KindCPUs, "instance %s: cpus %s: CPU %s not available on this host (available: %s)",
				s.InstanceName(), cpus, missing, h.CPUs)
		}
	}
	keys := make([]string, 0, len(s.Settings))
	for k := range s.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		v := s.Settings[k]
		if !settingName.MatchString(k) {
			return errorf(KindSpec, "instance %s: setting %q is not a setting name", s.InstanceName(), k)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return errorf(KindSpec, "instance %s: setting %s: value spans lines", s.InstanceName(), k)
		}
		if canonical, r, refused := eng.refused(k, v); refused {
			name := k
			if canonical != k {
				name += " (" + canonical + ")"
			}
			return errorf(KindSpec, "instance %s: setting %s %s", s.InstanceName(), name, r.why)
		}
		key := eng.settingKey(k)
		if other, dup := seen[key]; dup {
			return errorf(KindSpec, "instance %s: settings %s and %s are one setting: give it once", s.InstanceName(), other, k)
		}
		seen[key] = k
	}
	return nil
}

var settingName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// validateLatency checks the latency layer's settings against the spec.
func (s Spec) validateLatency() error {
	l := s.Latency
	if l == nil {
		return nil
	}
	if err := l.Validate(); err != nil {
		return errorf(KindSpec, "instance %s: %v", s.InstanceName(), err)
	}
	if !s.IOLimit.IsZero() {
		return errorf(KindSpec, "instance %s: io_limit and latency together: the server's I/O reaches the disk through the latency layer's process, "+
			"outside the cgroup io_limit caps; give a tier one or the other", s.InstanceName())
	}
	if l.On == latency.WALDir && s.WALDir == "" {
		return errorf(KindSpec, "instance %s: latency on=wal without a wal_dir", s.InstanceName())
	}
	if s.WALDir != "" {
		d, err1 := filepath.Abs(s.DataDir)
		w, err2 := filepath.Abs(s.WALDir)
		if err1 == nil && err2 == nil && (within(w, d) || within(d, w)) {
			return errorf(KindSpec, "instance %s: with latency, data_dir %s and wal_dir %s must not be inside one another: each gets a layer of its own",
				s.InstanceName(), s.DataDir, s.WALDir)
		}
	}
	return nil
}

// within reports whether path p is dir or below it (both clean, absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
