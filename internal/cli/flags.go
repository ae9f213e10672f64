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
	passwordFile string
}

func (t *targetFlags) register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&t.target, "target", env["OLTPLAB_TARGET"],
		"database `URL`: postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB or sqlite:PATH (env OLTPLAB_TARGET)")
	fs.StringVar(&t.passwordFile, "password-file", "", "read the database password from the first line of `FILE`")
}

// parse validates the target and registers its password as a secret.
func (a *app) parseTarget(t targetFlags) (dialect.Target, error) {
	if t.target == "" {
		return dialect.Target{}, usageErrorf("--target is required (postgres://..., mysql://... or sqlite:PATH)")
	}
	tg, err := dialect.ParseTarget(t.target, t.passwordFile)
	if err != nil {
		return dialect.Target{}, usageErrorf("%v", err)
	}
	a.secrets = append(a.secrets, tg.Password)
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
	return a.openStoreWith(ctx, s, store.Open)
}

// openStoreToRead opens the store for a command that only reads it: no
// whole-file integrity check (store.OpenToRead).
func (a *app) openStoreToRead(ctx context.Context, s storeFlags) (*store.Store, error) {
	return a.openStoreWith(ctx, s, store.OpenToRead)
}

func (a *app) openStoreWith(ctx context.Context, s storeFlags, open func(context.Context, string) (*store.Store, error)) (*store.Store, error) {
	if _, err := a.storeWait(); err != nil {
		return nil, err
	}
	path := s.path
	if path == "" {
		// The default location (also OLTPLAB_RESULTS): its data directory
		// is created on first use.
		p, err := store.PrepareDefault(func(k string) string { return a.env[k] })
		if err != nil {
			return nil, withCode(exitStore, err)
		}
		path = p
	}
	st, err := open(ctx, path)
	if err != nil {
		return nil, withCode(exitStore, err)
	}
	return st, nil
}
