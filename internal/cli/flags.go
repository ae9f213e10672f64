package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
)

// newFlagSet returns a GNU-style flag set (--long, -h, flags and
// positional arguments in any order, "--" ends the flags) that reports
// errors as values; parseFlags turns them into one usage line.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolP("help", "h", false, "show this help")
	return fs
}

// parseFlags parses args for a command without positional arguments;
// -h or --help prints the command's help and returns errHelp, which
// callers return as success.
func (a *app) parseFlags(fs *pflag.FlagSet, synopsis string, args []string) error {
	pos, err := a.parseWithArgs(fs, synopsis, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("%s: unexpected argument %q (see `oltplab %s --help`)", fs.Name(), pos[0], fs.Name())
	}
	return nil
}

var errHelp = errors.New("help shown")

// parseWithArgs parses flags mixed with positional arguments (`compare a b
// --format md`) and returns the positional ones.
func (a *app) parseWithArgs(fs *pflag.FlagSet, synopsis string, args []string) ([]string, error) {
	if a.describe != nil {
		a.describe(fs)
		return nil, errHelp
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorf("%s: %v (see `oltplab %s --help`)", fs.Name(), err, fs.Name())
	}
	if help, _ := fs.GetBool("help"); help {
		fmt.Fprintf(a.out(), "Usage: oltplab %s\n\nFlags:\n%s", synopsis, flagUsages(fs))
		return nil, errHelp
	}
	return fs.Args(), nil
}

// flagUsages is pflag's list of fs's flags, with switches shown as
// --json rather than --json[=true|false], as pgbench and psql show theirs.
// It is for the help only: it leaves fs's switches without IsBoolFlag.
func flagUsages(fs *pflag.FlagSet) string {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			f.Value = switchValue{f.Value}
		}
	})
	return fs.FlagUsages()
}

// switchValue hides a bool flag's IsBoolFlag from pflag's help; its
// NoOptDefVal still lets --json stand alone.
type switchValue struct{ pflag.Value }

// setDefault gives a flag another default than the one it was registered
// with (quickstart's short profile), in its value and in the help.
func setDefault(fs *pflag.FlagSet, name, value string) {
	f := fs.Lookup(name)
	_ = f.Value.Set(value)
	f.DefValue = value
}

// targetFlags are the flags every command that talks to a database shares.
type targetFlags struct {
	target       string
	targetSet    onceString
	passwordFile string
}

func (t *targetFlags) register(fs *pflag.FlagSet, env Env) {
	t.target = env["OLTPLAB_TARGET"]
	t.targetSet = onceString{p: &t.target, name: "target"}
	fs.Var(&t.targetSet, "target",
		"database `URL`: postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB, sqlserver://USER@HOST:PORT?database=DB or sqlite:PATH (env OLTPLAB_TARGET)")
	// The help shows the default from the environment without its password.
	if def := env["OLTPLAB_TARGET"]; def != "" {
		f := fs.Lookup("target")
		f.DefValue = "from OLTPLAB_TARGET"
		if tg, err := dialect.ParseTarget(def, ""); err == nil {
			f.DefValue = tg.String()
		}
	}
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
		return dialect.Target{}, usageErrorf("--target is required (postgres://..., mysql://..., sqlserver://... or sqlite:PATH)")
	}
	tg, err := dialect.ParseTarget(t.target, t.passwordFile)
	if err != nil {
		return dialect.Target{}, usageErrorf("%v", err)
	}
	a.secrets = append(a.secrets, tg.Password)
	tg.Env = dialect.Env{
		Getenv: func(k string) string { return a.env[k] },
		Logger: a.log,
		// Measures what raw-syscall session sockets save (make bench).
		PlainSockets: a.env["OLTPLAB_RAWCONN"] == "off",
	}
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
	a.printAbsences(db, tg)
	return db, tg, nil
}

// printAbsences says, one labelled line each, what the target's server
// lacks of what its dialect uses, and what oltplab does instead.
func (a *app) printAbsences(db dialect.Database, tg dialect.Target) {
	if ar, ok := db.(dialect.AbsenceReporter); ok {
		for _, ab := range ar.Absences() {
			fmt.Fprintf(a.errw(), "oltplab: %s: %s\n", tg, ab)
		}
	}
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

func (s *storeFlags) register(fs *pflag.FlagSet, env Env) {
	fs.StringVar(&s.path, "results", env["OLTPLAB_RESULTS"],
		"results store: a SQLite file `PATH`, or a postgres://USER@HOST:PORT/DB URL shared by many oltplab processes (default "+defaultResultsHint+", env OLTPLAB_RESULTS)")
}

// addURLSecret registers the password of a URL (a PostgreSQL results
// store's) as a secret, so that no output line can hold it.
func (a *app) addURLSecret(raw string) {
	if tg, err := dialect.ParseTarget(raw, ""); err == nil && tg.PasswordSet {
		a.secrets = append(a.secrets, tg.Password)
	}
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
	if path != "" && store.IsPostgresURL(path) {
		var err error
		if path, err = a.resultsPassword(path); err != nil {
			return nil, err
		}
		a.addURLSecret(path)
	}
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
		if cerr := ctx.Err(); cerr != nil {
			// Interrupted while opening it: exit 130, not a store error.
			return nil, fmt.Errorf("open results store: %w", cerr)
		}
		return nil, withCode(exitStore, err)
	}
	return st, nil
}

// resultsPassword puts the password of OLTPLAB_RESULTS_PASSWORD_FILE (a
// mounted Secret, as `oltplab k8s manifest` sets it) into a PostgreSQL
// results store URL that holds none.
func (a *app) resultsPassword(raw string) (string, error) {
	file := a.env["OLTPLAB_RESULTS_PASSWORD_FILE"]
	if file == "" {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw, nil // the store says what is wrong with the URL
	}
	if _, set := u.User.Password(); set {
		return raw, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", withCode(exitStore, fmt.Errorf("read the results store's password (OLTPLAB_RESULTS_PASSWORD_FILE): %w", err))
	}
	pw := strings.TrimRight(string(b), "\r\n")
	a.secrets = append(a.secrets, dialect.Secret(pw))
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String(), nil
}
