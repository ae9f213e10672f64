package dialect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
)

// Secret is a password. Every way of printing it prints REDACTED.
type Secret string

func (Secret) String() string               { return "REDACTED" }
func (Secret) GoString() string             { return "REDACTED" }
func (Secret) LogValue() slog.Value         { return slog.StringValue("REDACTED") }
func (Secret) MarshalText() ([]byte, error) { return []byte("REDACTED"), nil }
func (s Secret) Reveal() string             { return string(s) }

// Target is a parsed --target. Its String form never holds the password.
type Target struct {
	Scheme   string   // "postgres", "mysql", "sqlite"
	URL      *url.URL // without the password; for sqlite, Opaque or Path holds the file
	Password Secret   // from the URL or the password file; empty if none given
	// PasswordSet reports whether Password was given (an empty password is valid).
	PasswordSet bool
	// Env is the caller's environment and logger for the dialect; ParseTarget
	// leaves it empty for the caller to fill.
	Env Env
}

// String is the target with any password removed, safe for output and results.
func (t Target) String() string {
	if t.URL == nil {
		return ""
	}
	return t.URL.String()
}

// ParseTarget parses a target URL. postgresql:// is accepted for postgres://.
// A password in the URL is moved into Target.Password; passwordFile, when
// not empty, supplies it instead (first line, trailing newline removed).
func ParseTarget(raw, passwordFile string) (Target, error) {
	if raw == "" {
		return Target{}, errors.New("no target given (want postgres://..., mysql://... or sqlite:PATH)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the input, which may hold a password.
		return Target{}, errors.New("target is not a valid URL (want postgres://..., mysql://... or sqlite:PATH)")
	}
	t := Target{Scheme: strings.ToLower(u.Scheme)}
	if t.Scheme == "postgresql" {
		t.Scheme = "postgres"
	}
	if t.Scheme == "mariadb" {
		t.Scheme = "mysql"
	}
	if t.Scheme == "" {
		return Target{}, fmt.Errorf("target %q has no scheme (want postgres://..., mysql://... or sqlite:PATH)", redactRaw(raw))
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			t.Password, t.PasswordSet = Secret(p), true
			u.User = url.User(u.User.Username())
		}
	}
	if passwordFile != "" {
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return Target{}, fmt.Errorf("read password file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		t.Password, t.PasswordSet = Secret(strings.TrimRight(line, "\r")), true
	}
	t.URL = u
	return t, nil
}

func redactRaw(raw string) string {
	if i := strings.Index(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			userinfo := raw[j+3 : i]
			if user, _, ok := strings.Cut(userinfo, ":"); ok {
				return raw[:j+3] + user + ":REDACTED" + raw[i:]
			}
		}
	}
	return raw
}

// Opener opens a Database for a target of its scheme.
type Opener func(ctx context.Context, t Target) (Database, error)

var (
	mu      sync.Mutex
	openers = map[string]Opener{}
)

// Register makes a dialect available for a URL scheme. Dialect packages call
// it from init; the CLI imports them.
func Register(scheme string, open Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[scheme] = open
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	mu.Lock()
	defer mu.Unlock()
	var s []string
	for k := range openers {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// ErrUnknownScheme is returned by Open for a scheme no dialect registered.
var ErrUnknownScheme = errors.New("unknown target scheme")

// Open opens the database a target names.
func Open(ctx context.Context, t Target) (Database, error) {
	mu.Lock()
	open, ok := openers[t.Scheme]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownScheme, t.Scheme, strings.Join(Schemes(), ", "))
	}
	return open(ctx, t)
}
