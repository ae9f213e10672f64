package conformance

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

// containsSecret reports (as a test error) whether text holds secret,
// without printing the secret itself.
func containsSecret(t *testing.T, what, text, secret string) bool {
	t.Helper()
	if secret == "" || !strings.Contains(text, secret) {
		return false
	}
	t.Errorf("%s contains the password: %q", what, strings.ReplaceAll(text, secret, "<PASSWORD>"))
	return true
}

func testSecrets(t *testing.T, tg dialect.Target) {
	ctx := subtestContext(t)

	// The target as given and one with a made-up password, so that the
	// check means something for a dialect whose targets have none.
	made := tg
	made.Password, made.PasswordSet = dialect.Secret("conformance-"+randomHex(t)), true
	targets := []struct {
		name string
		tg   dialect.Target
	}{{"made-up password", made}}
	if tg.PasswordSet && tg.Password.Reveal() != "" {
		targets = append(targets, struct {
			name string
			tg   dialect.Target
		}{"test server password", tg})
	}

	for _, x := range targets {
		t.Run(x.name, func(t *testing.T) {
			tg, secret := x.tg, x.tg.Password.Reveal()
			outputs := []struct{ name, text string }{
				{"Target.String()", tg.String()},
				{"%v of Target", fmt.Sprintf("%v", tg)},
				{"%+v of Target", fmt.Sprintf("%+v", tg)},
				{"%#v of Target", fmt.Sprintf("%#v", tg)},
				{"%s of Target", fmt.Sprintf("%s", tg)},
				{"%v of *Target", fmt.Sprintf("%v", &tg)},
				{"%+v of *Target", fmt.Sprintf("%+v", &tg)},
				{"%v of Password", fmt.Sprintf("%v", tg.Password)},
				{"%+v of Password", fmt.Sprintf("%+v", tg.Password)},
				{"%#v of Password", fmt.Sprintf("%#v", tg.Password)},
				{"%s of Password", fmt.Sprintf("%s", tg.Password)},
				{"%q of Password", fmt.Sprintf("%q", tg.Password)},
				{"slog text of Target", slogOutput(false, slog.Any("target", tg), slog.Any("password", tg.Password))},
				{"slog text of *Target", slogOutput(false, slog.Any("target", &tg))},
				{"slog JSON of Target", slogOutput(true, slog.Any("target", tg), slog.Any("password", tg.Password))},
			}
			for _, o := range outputs {
				t.Run(o.name, func(t *testing.T) {
					if o.text == "" {
						t.Errorf("%s is empty, want some output", o.name)
					}
					containsSecret(t, o.name, o.text, secret)
				})
			}
		})
	}

	// What a dialect reports about itself is recorded with every result.
	if !tg.PasswordSet {
		return
	}
	db := openDB(t, tg)
	v, err := db.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	containsSecret(t, "Version()", v, tg.Password.Reveal())
	s, err := db.Settings(ctx)
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	containsSecret(t, "Settings()", fmt.Sprint(s), tg.Password.Reveal())
}

// slogOutput is what a slog handler writes for one record with attrs.
func slogOutput(json bool, attrs ...slog.Attr) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if json {
		h = slog.NewJSONHandler(&b, nil)
	}
	slog.New(h).LogAttrs(context.Background(), slog.LevelInfo, "open target", attrs...)
	return b.String()
}
