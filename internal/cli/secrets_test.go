package cli

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
)

// storeHolds reports whether the store file (or its WAL) holds s.
func storeHolds(t *testing.T, env []string, s string) bool {
	t.Helper()
	for _, kv := range env {
		path, ok := strings.CutPrefix(kv, "OLTPLAB_RESULTS=")
		if !ok {
			continue
		}
		for _, f := range []string{path, path + "-wal"} {
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}

// TestTargetFormsNeverEchoPasswords: however a password is written into
// --target, no output and no stored byte holds it, and malformed targets
// are refused as bad input (exit 2), not dialled somewhere else.
func TestTargetFormsNeverEchoPasswords(t *testing.T) {
	const pw = "PASSWORDX"
	env := storeEnv(t)
	port := closedPort(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"check", "--target", fmt.Sprintf("postgres:bench:%s@127.0.0.1:%d/db", pw, port)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("host=127.0.0.1 port=%d password=%s dbname=db", port, pw)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("mysql:bench:%s@127.0.0.1:%d/db", pw, port)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("mysql://bench@127.0.0.1:%d/db?password=%s", port, pw)}, exitConnect},
		{[]string{"check", "--target", fmt.Sprintf("postgres://bench@127.0.0.1:%d/db?password=%s", port, pw)}, exitConnect},
		{[]string{"check", "--target", fmt.Sprintf("mysql://bench@127.0.0.1:%d/db?allowCleartextPasswords=1&password=%s", port, pw)}, exitConnect},
		{[]string{"check", "--target", fmt.Sprintf("postgres://bench:%s@127.0.0.1:%d/db", pw, port), "--password-file", pwFile}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("postgres://bench:%s@127.0.0.1:%d/db?sslmode=bogus", pw, port)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("mysql://bench:%s@127.0.0.1:%d/db?frobnicate=1", pw, port)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("mysql://bench:%s@127.0.0.1:99999/db", pw)}, exitUsage},
		{[]string{"check", "--target", fmt.Sprintf("postgres://bench:%s@127.0.0.1:%d/db#x", pw, port)}, exitUsage},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.args[2], pw, "PW"), func(t *testing.T) {
			r := oltplab(t, env, c.args...)
			if r.code != c.want {
				t.Errorf("exit code: got %d, want %d", r.code, c.want)
			}
			if strings.Contains(r.out+r.err, pw) {
				t.Errorf("the password appears in the output")
			}
			if strings.Count(strings.TrimRight(r.err, "\n"), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", r.err)
			}
			if strings.Contains(r.err, ":3306") {
				t.Errorf("dialled the default port instead of the one given: %s", r.err)
			}
		})
	}
	if storeHolds(t, env, pw) {
		t.Errorf("the password is in the results store")
	}
}

// TestShortPasswordNotGarbled: a password shorter than dialect.MinScrubLen
// is removed from the target but not from every word it occurs in.
func TestShortPasswordNotGarbled(t *testing.T) {
	port := closedPort(t)
	r := oltplab(t, storeEnv(t), "check", "--target", fmt.Sprintf("postgres://bench:n@127.0.0.1:%d/db", port))
	if r.code != exitConnect {
		t.Errorf("exit code: got %d, want %d", r.code, exitConnect)
	}
	if !strings.Contains(r.err, "connect to postgres://bench@127.0.0.1") || strings.Contains(r.err, "REDACTED") {
		t.Errorf("message garbled or target not shown: %q", r.err)
	}
	if strings.Contains(r.err, ":n@") {
		t.Errorf("the short password appears in the target: %q", r.err)
	}
}

// assertPasswordParameterNeverStored runs on a built target with the
// password given as ?password=, which the drivers accept: the run works and
// nothing stored or printed holds the password (it used to reach the
// profile row before the run refused it). The workflow tests call it on
// the database they built.
func assertPasswordParameterNeverStored(t *testing.T, env []string, tg dialect.Target) {
	t.Helper()
	pw := dbtest.Password(tg)
	u := *tg.URL
	q := u.Query()
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	var all strings.Builder
	for _, args := range [][]string{
		{"run", "--target", u.String(), "--vus", "1", "--rampup", "0s", "--duration", "1s", "--label", "pwparam"},
		{"results", "list"},
		{"results", "export", "pwparam", "--format", "json"},
	} {
		r := oltplab(t, env, args...)
		if r.code != 0 {
			t.Errorf("%s with ?password=: exit %d", args[0], r.code)
		}
		all.WriteString(r.out + r.err)
	}
	if strings.Contains(all.String(), pw) || strings.Contains(all.String(), url.QueryEscape(pw)) {
		t.Errorf("the password appears in the output")
	}
	if storeHolds(t, env, pw) {
		t.Errorf("the password is in the results store")
	}
}
