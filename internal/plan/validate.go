package plan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// DirError: a directory a target needs cannot be created or written.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return fmt.Sprintf("directory %s: %v", e.Dir, e.Err) }
func (e *DirError) Unwrap() error { return e.Err }

// Validate checks the plan against this host without running anything:
// each managed instance's spec, binaries, directories, CPUs, cgroups and
// devices; each external target's reachability (a SQLite file's directory
// must be writable); and each step's own checks (free space for the
// build). Every error is a *yamldoc.Error at the target's line, wrapping
// the typed error that says what is wrong.
func Validate(ctx context.Context, p *Plan) error {
	d := &yamldoc.Decoder{File: p.File}
	if err := checkHostFiles(p, d); err != nil {
		return err
	}
	for _, t := range p.Targets {
		at := &yaml.Node{Line: t.Line}
		if err := checkDriverPlace(p, t); err != nil {
			return d.Wrap(at, t.Path, err)
		}
		if t.Host != "" {
			// Its agent checks the directories and binaries on its host
			// when it starts the instance; here, only the steps.
			if err := checkRemoteSteps(p, t); err != nil {
				return d.Wrap(at, t.Path, err)
			}
			continue
		}
		var err error
		if t.Managed() {
			err = instance.Check(t.Instance)
		} else {
			err = checkExternal(ctx, t)
		}
		if err != nil {
			return d.Wrap(at, t.Path, err)
		}
		for _, s := range p.Steps {
			c, ok := s.Step.(TargetChecker)
			if !ok {
				continue
			}
			if err := c.CheckTarget(p, t); err != nil {
				return d.Wrap(at, t.Path, fmt.Errorf("%s: %w", s.Kind.Name, err))
			}
		}
	}
	return nil
}

// checkExternal checks that a SQLite file can be created where the plan
// puts it, or that a server answers and accepts the credentials.
func checkExternal(ctx context.Context, t *TargetSpec) error {
	if t.parsed.Scheme == "sqlite" {
		return checkWritableDir(filepath.Dir(t.SQLiteFile()))
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	db, err := dialect.Open(cctx, t.parsed)
	if err != nil {
		return fmt.Errorf("open %s: %w", t.parsed, err)
	}
	defer db.Close()
	if _, err := db.Version(cctx); err != nil {
		return fmt.Errorf("connect to %s: %w", t.parsed, err)
	}
	return nil
}

// SQLiteFile is the file of a sqlite: target ("" for others).
func (t *TargetSpec) SQLiteFile() string {
	if t.parsed.Scheme != "sqlite" {
		return ""
	}
	p := t.parsed.URL.Opaque
	if p == "" {
		p = t.parsed.URL.Path
	}
	return p
}

// checkWritableDir checks that files can be created in dir.
func checkWritableDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return &DirError{Dir: dir, Err: err}
	}
	if !st.IsDir() {
		return &DirError{Dir: dir, Err: errors.New("not a directory")}
	}
	f, err := os.CreateTemp(dir, ".oltplab-probe-*")
	if err != nil {
		return &DirError{Dir: dir, Err: errors.New("cannot create files in it")}
	}
	f.Close()
	return os.Remove(f.Name())
}

// RemoteKinds are the step kinds a target on an agent's host can run:
// they reach the database through its agent's tunnel, or run beside its
// data on the agent (storage: fio on the instance's data directory;
// backup: the engine's tools, and the restores into new instances of
// that agent; rebuild: its cold restarts and page-cache drops, and the
// server's counters; cpu: the client loop). The noisy neighbours and
// the kinds that drive several targets at one instant are refused there,
// for now.
var RemoteKinds = []string{"build", "profile", "storage", "backup", "rebuild", "cpu"}

// RemoteChecker is a step kind that runs on a target on an agent's host
// with some of its options only (a backup's directories must be that
// host's absolute paths).
type RemoteChecker interface {
	CheckRemote(p *Plan, t *TargetSpec) error
}

// ErrRemoteStep is wrapped by the refusal of a step on a remote target.
var ErrRemoteStep = errors.New("not supported on a target on an agent's host")

func checkRemoteSteps(p *Plan, t *TargetSpec) error {
	for _, s := range p.Steps {
		if !slices.Contains(RemoteKinds, s.Kind.Name) {
			return fmt.Errorf("step %s: %w (host %s): it runs beside the data or over several targets at once; the steps such a target runs: %s",
				s.Kind.Name, ErrRemoteStep, t.Host, strings.Join(RemoteKinds, ", "))
		}
		if c, ok := s.Step.(RemoteChecker); ok {
			if err := c.CheckRemote(p, t); err != nil {
				return fmt.Errorf("step %s: %w (host %s): %w", s.Kind.Name, ErrRemoteStep, t.Host, err)
			}
		}
	}
	return nil
}

// checkDriverPlace refuses a driver on another host that could not reach
// the target: a managed instance here listens on this machine's loopback
// only, and an embedded SQLite file is this machine's.
func checkDriverPlace(p *Plan, t *TargetSpec) error {
	for _, s := range p.Steps {
		h := p.DriverHost(s)
		if h != "" && slices.Contains(localDrivers, s.Kind.Name) {
			return fmt.Errorf("step %s: its driver runs on the runner's machine only; the plan's driver: {host: %s} places the profile steps' drivers (give it to them)", s.Kind.Name, h)
		}
		if h == "" || h == t.Host {
			continue
		}
		switch {
		case t.Host == "" && t.Managed():
			return fmt.Errorf("step %s: its driver runs on host %s, which cannot reach a managed instance here (it listens on this machine's loopback only): place the target on an agent too (host:)", s.Kind.Name, h)
		case t.Host == "" && t.Parsed().Scheme == "sqlite":
			return fmt.Errorf("step %s: its driver runs on host %s; a sqlite: file is this machine's", s.Kind.Name, h)
		}
	}
	return nil
}

// fingerprintPattern is a certificate's fingerprint as an agent prints it.
var fingerprintPattern = regexp.MustCompile(`^(?i)(sha256:)?([0-9a-f]{2}:?){31}[0-9a-f]{2}$`)

// checkHostFiles checks what the plan's hosts name on this machine: a
// fingerprint as the agent prints it, a token file that exists.
func checkHostFiles(p *Plan, d *yamldoc.Decoder) error {
	for _, name := range slices.Sorted(maps.Keys(p.Hosts)) {
		h := p.Hosts[name]
		at := &yaml.Node{Line: h.Line}
		if h.Fingerprint != "" && !fingerprintPattern.MatchString(h.Fingerprint) {
			return d.Errorf(at, "hosts."+name+".fingerprint", "%q: want sha256: and 64 hex digits, as the agent on %s prints it when it starts", h.Fingerprint, h.Agent)
		}
		if _, err := os.Stat(h.TokenFile); err != nil {
			return d.Errorf(at, "hosts."+name+".token_file", "%v (the agent's token, the file readable by its owner only)", err)
		}
	}
	return nil
}

// localDrivers are the step kinds that drive load but only from the
// runner's machine: a plan's driver: {host: ...} would be ignored there.
var localDrivers = []string{"parallel", "neighbours", "tpch"}
