package dialect

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		raw, file  string
		scheme     string
		display    string
		password   string
		wantErr    bool
		passwordOK bool
	}{
		{raw: "postgres://bench:s3cret@127.0.0.1:5432/tpcc", scheme: "postgres", display: "postgres://bench@127.0.0.1:5432/tpcc", password: "s3cret", passwordOK: true},
		{raw: "postgresql://bench@127.0.0.1/tpcc", scheme: "postgres", display: "postgresql://bench@127.0.0.1/tpcc"},
		{raw: "mariadb://root:pw@127.0.0.1:3306/tpcc", scheme: "mysql", display: "mariadb://root@127.0.0.1:3306/tpcc", password: "pw", passwordOK: true},
		{raw: "mysql://root@127.0.0.1:3306/tpcc", file: pwFile, scheme: "mysql", display: "mysql://root@127.0.0.1:3306/tpcc", password: "fromfile", passwordOK: true},
		{raw: "sqlite:./tpcc.db", scheme: "sqlite", display: "sqlite:./tpcc.db"},
		{raw: "", wantErr: true},
		{raw: "just-a-path.db", wantErr: true},
		{raw: "postgres://bench:s3cret@[::1", wantErr: true},
		{raw: "postgres://u@h/db", file: filepath.Join(t.TempDir(), "missing"), wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.raw+"|"+filepath.Base(c.file), func(t *testing.T) {
			tg, err := ParseTarget(c.raw, c.file)
			if c.wantErr {
				if err == nil {
					t.Fatalf("got no error, want one")
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error %q holds the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if tg.Scheme != c.scheme {
				t.Errorf("scheme: got %q, want %q", tg.Scheme, c.scheme)
			}
			if tg.String() != c.display {
				t.Errorf("display: got %q, want %q", tg.String(), c.display)
			}
			if tg.Password.Reveal() != c.password || tg.PasswordSet != c.passwordOK {
				t.Errorf("password: got %q (set %v), want %q (set %v)", tg.Password.Reveal(), tg.PasswordSet, c.password, c.passwordOK)
			}
		})
	}
}

// TestSecretNeverPrints: every way of printing a target or its password
// prints no password.
func TestSecretNeverPrints(t *testing.T) {
	tg, err := ParseTarget("postgres://bench:hunter2hunter2@127.0.0.1/tpcc", "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Info("target", "t", tg, "pw", tg.Password)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("target", "t", tg, "pw", tg.Password)
	fmt.Fprintf(&buf, "%v %+v %#v %s %v %+v %#v %q", tg, tg, tg, tg.Password, tg.Password, tg.Password, tg.Password, tg.Password)
	if strings.Contains(buf.String(), "hunter2") {
		t.Errorf("password printed: %s", buf.String())
	}
}

// FuzzParsePasswordFile: a password file gives its first line without the
// line ending, whatever else it holds.
func FuzzParsePasswordFile(f *testing.F) {
	for _, s := range []string{"s3cret\n", "s3cret\r\nsecond line\n", "", "\n", "no newline", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePasswordFile(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		got := p.Reveal()
		if strings.ContainsAny(got, "\n") || strings.HasSuffix(got, "\r") || !strings.HasPrefix(in, got) {
			t.Errorf("ParsePasswordFile(%q) = %q, want the first line without its ending", in, got)
		}
	})
}
