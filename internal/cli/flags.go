package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
)

// newFlagSet returns a flag set that reports errors as values; parseFlags
// turns them into one usage line.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args; --help prints the command's help and returns
// errHelp, which callers return as success.
func (a *app) parseFlags(fs *flag.FlagSet, synopsis string, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		a.printHelp(fs, synopsis)
		return errHelp
	}
	if err != nil {
		return usageErrorf("%s: %v (see `oltplab %s --help`)", fs.Name(), err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usageErrorf("%s: unexpected argument %q (see `oltplab %s --help`)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

var errHelp = errors.New("help shown")

// parseWithArgs parses flags mixed with positional arguments (`compare a b
// --format md`) and returns the positional ones.
func (a *app) parseWithArgs(fs *flag.FlagSet, synopsis string, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				a.printHelp(fs, synopsis)
				return nil, errHelp
			}
			return nil, usageErrorf("%s: %v (see `oltplab %s --help`)", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func (a *app) printHelp(fs *flag.FlagSet, synopsis string) {
	w := a.stdio.Out
	fmt.Fprintf(w, "Usage: oltplab %s\n\nFlags:\n", synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// targetFlags are the flags every command that talks to a database shares.
type targetFlags struct {
	target       string
	targetSet    onceString
	passwordFile string
}

func (t *targetFlags) register(fs *flag.FlagSet, env Env) {
	t.target = env["OLTPLAB_TARGET"]
	t.targetSet = onceString{p: &t.target, name: "target"}
	fs.Var(&t.targetSet, "target",
		"database `URL`: postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB or sqlite:PATH (env OLTPLAB_TARGET)")
	fs.StringVar(&t.passwordFile, "password-file", "", "read the database password from the first line of `FILE`")
}

// onceString is a string flag that may be given once: a second value is
// remembered as an error for the caller (parseTarget) to report, without
// quoting either value, which may hold a password. The default (from the
// environment) is not a first value. It satisfies flag.Value and
// pflag.Value.
type onceString struct {
	p     *string
	name  string
	set   bool
	twice bool
}

func (o *onceString) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *onceString) Set(v string) error {
	if o.set {
		o.twice = true
		return nil
	}
	*o.p, o.set = v, true
	return nil
}

// Type names the value for pflag's help.
func (o *onceString) Type() string { return "string" }

// err reports a flag given more than once.
func (o *onceString) err() error {
	if o.twice {
		return usageErrorf("--%s given twice: give it once (which one was meant cannot be guessed)", o.name)
	}
	return nil
}

// parse validates the target and registers its password as a secret.
func (a *app) parseTarget(t targetFlags) (dialect.Target, error) {
	if err := t.targetSet.err(); err != nil {
		return dialect.Target{}, err
	}
	if t.target == "" {
		return dialect.Target{}, usageErrorf("--target is required (postgres://..., mysql://... or sqlite:PATH)")
	}
	tg, err := dialect.ParseTarget(t.target, t.passwordFile)
	if err != nil {
		return dialect.Target{}, usageErrorf("%v", err)
	}
	a.secrets = append(a.secrets, tg.Password.Reveal())
	return tg, nil
}

// openTarget parses and opens the target database.
func (a *app) openTarget(ctx context.Context, t targetFlags) (dialect.Database, dialect.Target, error) {
	tg, err := a.parseTarget(t)
	if err != nil {
		return nil, tg, err
	}
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		if errors.Is(err, dialect.ErrUnknownScheme) {
			return nil, tg, usageErrorf("%v", err)
		}
		return nil, tg, err
	}
	return db, tg, nil
}

// withTarget opens the results store first (so an unusable store fails
// before any database work), then the target, runs fn and closes both.
func (a *app) withTarget(ctx context.Context, sf storeFlags, tf targetFlags, fn func(*store.Store, dialect.Database, dialect.Target) error) error {
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	db, tg, err := a.openTarget(ctx, tf)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(st, db, tg)
}

// storeFlags selects the results store.
type storeFlags struct{ path string }

const defaultResultsHint = "~/.local/share/oltplab/results.db"

func (s *storeFlags) register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&s.path, "results", env["OLTPLAB_RESULTS"],
		"results store `PATH` (SQLite file; default "+defaultResultsHint+", env OLTPLAB_RESULTS)")
}

func (a *app) openStore(ctx context.Context, s storeFlags) (*store.Store, error) {
	var (
		st  *store.Store
		err error
	)
	if s.path == "" {
		// The default location (also OLTPLAB_RESULTS): its data directory
		// is created on first use.
		st, err = store.OpenDefault(ctx, func(k string) string { return a.env[k] })
	} else {
		st, err = store.Open(ctx, s.path)
	}
	if err != nil {
		return nil, withCode(exitStore, err)
	}
	return st, nil
}
