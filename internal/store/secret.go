package store

import (
	"net/url"
	"regexp"
	"strings"
)

// redactedPasswords are what redaction leaves behind: dialect.Secret prints
// REDACTED, url.URL.Redacted writes xxxxx.
var redactedPasswords = map[string]bool{"": true, "REDACTED": true, "xxxxx": true}

var (
	rawUserinfoPassword = regexp.MustCompile(`://[^/@?#]*:[^/@?#]+@`)
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
	if err != nil || u.Scheme == "" {
		if rawUserinfoPassword.MatchString(target) || hasKeywordPassword(target) {
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
		if !strings.Contains(strings.ToLower(k), "password") {
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
