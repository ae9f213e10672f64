package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	for _, t := range p.Targets {
		at := &yaml.Node{Line: t.Line}
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
