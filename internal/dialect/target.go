package dialect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
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

// String is the target with any password removed, safe for output and
// results: the URL holds none, and other secret parameters (sslpassword)
// print as REDACTED.
func (t Target) String() string {
	if t.URL == nil {
		return ""
	}
	u := *t.URL
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.User(u.User.Username())
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		redacted := false
		for k := range q {
			if isSecretParam(k) {
				q[k] = []string{Redacted}
				redacted = true
			}
		}
		if redacted {
			u.RawQuery = q.Encode()
		}
	}
	// ParseTarget leaves no password in the URL; Redact is a second line.
	return Redact(u.String())
}

// ErrBadTarget is wrapped by every error that says a target is malformed
// (a parameter or value its dialect does not accept): the user's input,
// not the server, is wrong.
var ErrBadTarget = errors.New("invalid target")

// maxTargetLen bounds a target; nothing longer is a connection URL.
const maxTargetLen = 4096

// maxPasswordFile bounds what is read of a password file.
const maxPasswordFile = 64 << 10

const targetForms = "postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB, sqlserver://USER@HOST:PORT?database=DB or sqlite:PATH"

// ParseTarget parses a target URL. postgresql:// is accepted for
// postgres://, mariadb:// for mysql://. A password in the URL's user
// information or in a ?password= parameter is moved into Target.Password;
// passwordFile, when not empty, supplies it instead (first line, trailing
// newline removed), and giving both is an error rather than a silent
// choice. Errors never quote the input: only its scheme or port.
func ParseTarget(raw, passwordFile string) (Target, error) {
	if raw == "" {
		return Target{}, errors.New("no target given (want " + targetForms + ")")
	}
	if len(raw) > maxTargetLen {
		return Target{}, fmt.Errorf("target is %d bytes long; a connection URL is at most %d (want %s)", len(raw), maxTargetLen, targetForms)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the input, which may hold a password.
		return Target{}, errors.New("target is not a valid URL (want " + targetForms + ")")
	}
	t := Target{Scheme: strings.ToLower(u.Scheme)}
	switch t.Scheme {
	case "postgresql":
		t.Scheme = "postgres"
	case "mariadb":
		t.Scheme = "mysql"
	case "":
		return Target{}, errors.New("target has no scheme (want " + targetForms + ")")
	}
	if u.Opaque != "" {
		// "postgres:user:pass@host/db": the user information of an opaque
		// URL is not parsed as such; a driver would take it for a host.
		if i := strings.LastIndex(u.Opaque, "@"); i >= 0 && strings.Contains(u.Opaque[:i], ":") {
			return Target{}, fmt.Errorf("target %s:...: write %s://USER@HOST:PORT/DB, with two slashes after the scheme", t.Scheme, t.Scheme)
		}
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		// Nothing after '#' reaches a driver; a '#' in a password must be
		// written %23.
		return Target{}, fmt.Errorf("target %s has a '#': write a '#' in a password or parameter as %%23", t.Scheme)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			// url.Parse lets only digits through as a port.
			return Target{}, fmt.Errorf("target %s: port %s is not a port number (1-65535)", t.Scheme, cutEcho(p))
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			t.Password, t.PasswordSet = Secret(p), true
			u.User = url.User(u.User.Username())
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return Target{}, fmt.Errorf("target %s: the parameters after '?' are not valid", t.Scheme)
		}
		for k, vs := range q {
			if strings.ToLower(k) != "password" {
				continue
			}
			if t.PasswordSet || len(vs) > 1 {
				return Target{}, fmt.Errorf("target %s gives the password twice: give it once", t.Scheme)
			}
			t.Password, t.PasswordSet = Secret(vs[0]), true
			delete(q, k)
			u.RawQuery = q.Encode()
		}
	}
	if passwordFile != "" {
		if t.PasswordSet {
			return Target{}, errors.New("--password-file and a password in --target: give the password once")
		}
		p, err := readPasswordFile(passwordFile)
		if err != nil {
			return Target{}, err
		}
		t.Password, t.PasswordSet = p, true
	}
	t.URL = u
	return t, nil
}

// readPasswordFile returns the first line of the file, without its line
// ending.
func readPasswordFile(path string) (Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read password file: %w", err)
	}
	defer f.Close()
	p, err := ParsePasswordFile(io.LimitReader(f, maxPasswordFile))
	if err != nil {
		return "", fmt.Errorf("read password file %s: %w", path, err)
	}
	return p, nil
}

// ParsePasswordFile returns the first line of r without its line ending.
func ParsePasswordFile(r io.Reader) (Secret, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return Secret(strings.TrimRight(line, "\r")), nil
}

// cutEcho cuts s to a length an error line may carry.
func cutEcho(s string) string {
	const maxEcho = 200
	if len(s) <= maxEcho {
		return s
	}
	return strings.ToValidUTF8(s[:maxEcho], "") + "..."
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
