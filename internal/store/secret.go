package store

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// secretParams are the URL parameters whose value is a secret.
var secretParams = map[string]bool{"password": true, "sslpassword": true}

// redactedPasswords are what redaction leaves behind: dialect.Secret prints
// REDACTED, url.URL.Redacted writes xxxxx.
var redactedPasswords = map[string]bool{"": true, "REDACTED": true, "xxxxx": true}

var (
	// "user:pass@" after "scheme://", after "scheme:" (opaque) or alone.
	rawUserinfoPassword = regexp.MustCompile(`(?i)(?:^[a-z][a-z0-9+.-]*:|://|^)[^/?#@\s:]*:([^\s]*)@`)
	rawKeywordPassword  = regexp.MustCompile(`(?i)(^|[\s;&?])[a-z_]*password\s*=\s*[^\s;&]+`)
)

// checkNoSecret catches a caller that forgot to redact a target: a URL
// password ("user:pass@"), a password query parameter, or a keyword/value
// connection string's password=. The error never quotes the target.
func checkNoSecret(target string) error {
	if target == "" {
		return nil
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		if m := rawUserinfoPassword.FindStringSubmatch(target); m != nil && !redactedPasswords[m[1]] {
			return ErrSecretInTarget
		}
		if hasKeywordPassword(target) {
			return ErrSecretInTarget
		}
		return nil
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok && !redactedPasswords[p] {
			return ErrSecretInTarget
		}
	}
	for k, vs := range u.Query() {
		// Exact keys: allowCleartextPasswords=1 is not a password.
		if !secretParams[strings.ToLower(k)] {
			continue
		}
		for _, v := range vs {
			if !redactedPasswords[v] {
				return ErrSecretInTarget
			}
		}
	}
	return nil
}

func hasKeywordPassword(s string) bool {
	for _, m := range rawKeywordPassword.FindAllString(s, -1) {
		_, v, _ := strings.Cut(m, "=")
		if !redactedPasswords[strings.Trim(strings.TrimSpace(v), `'"`)] {
			return true
		}
	}
	return false
}

// checkNoSecretJSON applies checkNoSecret to every string stored under a
// "target" key in params or context JSON: a profile's parameters carry the
// target too, and must not be written before it was redacted.
func checkNoSecretJSON(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil // invalid JSON is refused by jsonObject
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && strings.EqualFold(k, "target") {
					if err := checkNoSecret(s); err != nil {
						return err
					}
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}
