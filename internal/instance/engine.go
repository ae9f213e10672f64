package instance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/oltplab/oltplab/internal/dialect"
)

// engine is what differs between the databases an instance can run. Shared
// code never compares engine names; it asks the engine.
type engine interface {
	// server is false for an embedded engine (no process to start).
	server() bool
	// settingKey is a setting's name as the server reads it (its case,
	// '-' or '_'): two names with one key are one setting.
	settingKey(name string) string
	// refused is the refusal of setting name=value, with the server's own
	// name for it, when a spec must not give it: oltplab sets it, or it
	// would undo the instance's isolation (refused.go).
	refused(name, value string) (canonical string, r refusal, ok bool)
	// locate finds the binaries, in binDir when it is given, or returns a
	// KindBinary error naming the Debian package to install.
	locate(binDir string) (Binaries, error)
	// osUser is the unprivileged account the server runs as when oltplab
	// runs as root.
	osUser() string
	// initialised reports whether i's engine directory holds a database
	// this engine created, and whether its log lives where the spec says.
	initialised(i *Instance) (bool, error)
	// initialise creates the database files (as the server's user).
	initialise(ctx context.Context, i *Instance) error
	// settings are what oltplab gives the server, in order, the spec's
	// own Settings last.
	settings(i *Instance) []setting
	// prepare writes the files one start needs into the run directory and
	// returns the server's command line (after the binary).
	prepare(i *Instance) ([]string, error)
	// stopSignal asks the server for a fast, clean shutdown;
	// deathSignal is what the kernel sends it when oltplab dies.
	stopSignal() syscall.Signal
	deathSignal() syscall.Signal
	// ready waits until the server accepts the generated password, creates
	// the database for oltplab, and returns settings as the server reports
	// them. It fails when ctx ends.
	ready(ctx context.Context, i *Instance) (map[string]string, error)
	// target is the URL oltplab's dialects connect to; scheme its scheme.
	target(i *Instance) dialect.Target
	scheme() string
	// memorySetting names the setting Spec.Memory sets.
	memorySetting() string
	// ioLimitNote says how the engine's writes reach a cgroup v1
	// throttle (which sees only direct and synchronous I/O).
	ioLimitNote() string
}

var engines = map[Engine]engine{
	Postgres: postgresEngine{},
	MariaDB:  mariadbEngine{},
	SQLite:   sqliteEngine{},
}

// EngineOf is the engine whose databases a target scheme reaches
// ("postgres", "mysql", "sqlite").
func EngineOf(scheme string) (Engine, bool) {
	for _, e := range Engines() {
		if engines[e].scheme() == scheme {
			return e, true
		}
	}
	return "", false
}

// Binaries are the programs of an engine.
type Binaries struct {
	Dir     string `json:"dir"`
	Server  string `json:"server"`
	Init    string `json:"init,omitempty"`
	Version string `json:"version"`
}

// setting is one server setting as oltplab passes it.
type setting struct{ name, value string }

// withSpecSettings appends the spec's settings, sorted by name, to base.
func withSpecSettings(base []setting, spec map[string]string) []setting {
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		base = append(base, setting{k, spec[k]})
	}
	return base
}

// findBinary looks for name in dirs, then on PATH; "" when absent.
func findBinary(name string, dirs ...string) string {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}

// versionOf runs BINARY --version and returns its first line (some
// tools, mariadb-backup among them, print it on stderr).
func versionOf(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if strings.HasPrefix(line, bin) { // mariadbd prints its own path
		line = filepath.Base(bin) + line[len(bin):]
	}
	return strings.Join(strings.Fields(line), " ")
}
