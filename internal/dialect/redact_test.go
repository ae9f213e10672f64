package dialect

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseTargetNeverEchoesPasswords: every way of writing a password
// into a target is either taken out of it or refused, and neither the
// target's String form nor the error quotes it.
func TestParseTargetNeverEchoesPasswords(t *testing.T) {
	const pw = "PASSWORDX"
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		raw, file string
		wantErr   bool
		wantPw    string // when accepted
		display   string // when accepted
	}{
		{raw: "postgres:bench:" + pw + "@127.0.0.1:5432/db", wantErr: true},
		{raw: "mysql:bench:" + pw + "@127.0.0.1:3307/db", wantErr: true},
		{raw: "host=127.0.0.1 password=" + pw + " dbname=db", wantErr: true},
		{raw: "host=127.0.0.1 password='" + pw + " x' dbname=db", wantErr: true},
		{raw: "//bench:" + pw + "@127.0.0.1/db", wantErr: true},
		{raw: "mysql://bench@127.0.0.1:3307/db?password=" + pw, wantPw: pw, display: "mysql://bench@127.0.0.1:3307/db"},
		{raw: "postgres://bench@127.0.0.1:5439/db?sslmode=disable&password=" + pw, wantPw: pw, display: "postgres://bench@127.0.0.1:5439/db?sslmode=disable"},
		{raw: "postgres://bench@h/db?sslpassword=" + pw, display: "postgres://bench@h/db?sslpassword=REDACTED"},
		{raw: "mysql://bench@h/db?allowCleartextPasswords=1", display: "mysql://bench@h/db?allowCleartextPasswords=1"},
		{raw: "postgres://bench:" + pw + "@h/db?password=other", wantErr: true},
		{raw: "postgres://bench:" + pw + "@h/db", file: file, wantErr: true},
		{raw: "postgres://bench:" + pw + "@h:99999/db", wantErr: true},
		{raw: "postgres://bench:" + pw + "@h:0/db", wantErr: true},
		{raw: "postgres://bench:" + pw + "@h/db?" + strings.Repeat("x", 5000), wantErr: true},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.raw, pw, "PW"), func(t *testing.T) {
			tg, err := ParseTarget(c.raw, c.file)
			if c.wantErr {
				if err == nil {
					t.Fatalf("accepted as %s, want an error", tg)
				}
				if strings.Contains(err.Error(), pw) {
					t.Errorf("error quotes the password: %v", err)
				}
				if len(err.Error()) > 600 {
					t.Errorf("error is %d bytes long: it echoes too much", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if got := tg.String(); got != c.display {
				t.Errorf("display: got %q, want %q", got, c.display)
			}
			if got := tg.Password.Reveal(); got != c.wantPw {
				t.Errorf("password: got %q, want %q", got, c.wantPw)
			}
		})
	}
}

// TestScrubKnownLeavesDocumentsAlone: results and reports are scrubbed of
// known passwords only; CSS and JSON that look like user information stay.
func TestScrubKnownLeavesDocumentsAlone(t *testing.T) {
	for _, doc := range []string{".a{margin-right:16px}@media print{}", `{"k":"v:w@x"}`, "hunter2hunter2"} {
		want := strings.ReplaceAll(doc, "hunter2hunter2", Redacted)
		if got := ScrubKnown(doc, "hunter2hunter2"); got != want {
			t.Errorf("ScrubKnown(%q) = %q, want %q", doc, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	cases := []struct {
		in      string
		secrets []Secret
		want    string
	}{
		// A short password is not matched as text: "connect" stays whole.
		{"connect to postgres://bench:n@h/db: connection refused", []Secret{"n"},
			"connect to postgres://bench:REDACTED@h/db: connection refused"},
		{"password authentication failed for hunter2hunter2", []Secret{"hunter2", "hunter2hunter2"},
			"password authentication failed for REDACTED"},
		{"host=h password=s3cr3t dbname=x", nil, "host=h password=REDACTED dbname=x"},
		{"mysql://u@h/db?allowCleartextPasswords=1", nil, "mysql://u@h/db?allowCleartextPasswords=1"},
		{"mysql://root@127.0.0.1:3306/tpcc", nil, "mysql://root@127.0.0.1:3306/tpcc"},
		{"Access denied for user 'bench'@'localhost' (using password: YES)", nil,
			"Access denied for user 'bench'@'localhost' (using password: YES)"},
		{`{"password": "a b", "user": "u"}`, nil, `{"password": REDACTED, "user": "u"}`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := Scrub(c.in, c.secrets...); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// targetForms writes user, password and host into a target in one of the
// ways users write them, escaped where the form has escapes and raw where
// users type them raw.
func targetForm(form uint8, user, pw, host string) string {
	switch form % 7 {
	case 0:
		return "postgres://" + url.UserPassword(user, pw).String() + "@" + host + "/db"
	case 1:
		return "mysql://" + url.User(user).String() + "@" + host + "/db?password=" + url.QueryEscape(pw)
	case 2:
		return "postgres:" + user + ":" + pw + "@" + host + "/db"
	case 3:
		return "host=" + host + " user=" + user + " password=" + pw + " dbname=db"
	case 4:
		return "mysql://" + user + ":" + pw + "@" + host + "/db"
	case 5:
		q := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw)
		return "host=" + host + " password='" + q + "' user=" + user
	default:
		return "//" + user + ":" + pw + "@" + host + "/db"
	}
}

// outputs is everything parsing and redacting raw may print. Redacting
// free text cannot tell where a password with spaces ends in a form that
// has no quoting (raw in a URL, unquoted keyword); ParseTarget still must
// not print it.
func outputs(raw string, form uint8, pw string) []string {
	var out []string
	if spaced := strings.ContainsAny(pw, " \t\n\f\r"); !spaced || form%7 <= 1 || form%7 == 5 {
		out = append(out, Redact(raw), Scrub(raw))
	}
	if tg, err := ParseTarget(raw, ""); err != nil {
		out = append(out, err.Error())
	} else {
		out = append(out, tg.String())
	}
	return out
}

// FuzzTargetSecrets: whatever the user, password and host, and however
// the target is written, the password never appears in what parsing and
// redaction print. A password's text may of course appear for another
// reason (the user is "bench" and the password "ench"): the check
// compares with the same target holding another password of the same
// length, and reports a leak only when the text appears because of the
// password. Passwords shorter than MinScrubLen are left out: any message
// holds most one-to-three-character strings.
func FuzzTargetSecrets(f *testing.F) {
	for form := range uint8(7) {
		f.Add("bench", "s3cr3t-pw", "127.0.0.1:5432", form)
		f.Add("bench", "p@ss/w?rd#x", "db.example.com", form)
		f.Add("u", "a b'c\\d", "h", form)
		f.Add("bench", "n", "h:1", form)
	}
	// The text of oltplab's own messages: a password that is part of it
	// shows up because of the message, not because it leaked.
	var vocabulary strings.Builder
	for _, bad := range []string{"", "x y", "no-scheme", "postgres:u:p@h", "postgres://h:0", "postgres://h/db?%",
		"postgres://u:p@h/?password=q", "postgres://h/#", "postgres://" + strings.Repeat("h", maxTargetLen)} {
		for _, o := range outputs(bad, 0, "") {
			vocabulary.WriteString(o + "\n")
		}
	}
	f.Fuzz(func(t *testing.T, user, pw, host string, form uint8) {
		if len(pw) < MinScrubLen || len(pw) > 64 || len(user) > 64 || len(host) > 64 || strings.Contains(vocabulary.String(), pw) {
			return
		}
		const ws = "\t\n\f\r "
		switch form % 7 {
		case 2, 4, 6:
			// Typed raw into a URL, a delimiter in the user or password
			// makes the text another URL (the password becomes a host,
			// port, path or query), which nothing can tell from what the
			// user meant; users percent-encode them (forms 0 and 1). In
			// the opaque form (2) the password may hold '/' and spaces.
			if strings.ContainsAny(user, "/?#@:"+ws) || strings.ContainsAny(pw, "?#") ||
				(form%7 != 2 && strings.ContainsAny(pw, "/"+ws)) {
				return
			}
		}
		alt := otherPassword(pw)
		raw := targetForm(form, user, pw, host)
		altOut := strings.Join(outputs(targetForm(form, user, alt, host), form, alt), "\n")
		for _, o := range outputs(raw, form, pw) {
			if strings.Contains(o, pw) && !strings.Contains(altOut, pw) {
				t.Errorf("target %q: output %q holds the password %q", raw, o, pw)
			}
		}
	})
}

// otherPassword is a password of the same length made of one letter pw
// does not hold.
func otherPassword(pw string) string {
	for _, c := range "ZQXJKV" {
		if !strings.ContainsRune(pw, c) {
			return strings.Repeat(string(c), len(pw))
		}
	}
	return strings.Repeat("W", len(pw))
}

// FuzzRedact: redaction never panics, is idempotent, and a target it
// accepts prints no password.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"postgres://bench:pw@127.0.0.1:5432/tpcc", "mysql://root@h/db?password=x&tls=true",
		"host=h password='a b' dbname=x", "sqlite:./tpcc.db", "postgres:u:p@h/db", `{"password":"x"}`,
		"mysql://u@h/db?allowCleartextPasswords=1", "postgres://u@h/db?sslpassword=k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := Redact(raw)
		if again := Redact(r); again != r {
			t.Errorf("Redact is not idempotent: %q -> %q -> %q", raw, r, again)
		}
		tg, err := ParseTarget(raw, "")
		if err != nil {
			return
		}
		shown, err := ParseTarget(tg.String(), "")
		if err != nil {
			return
		}
		if p := shown.Password.Reveal(); shown.PasswordSet && p != "" && p != Redacted {
			t.Errorf("target %q prints as %q, which holds password %q", raw, tg.String(), p)
		}
	})
}
