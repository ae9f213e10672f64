package dialect

import (
	"regexp"
	"strings"
)

// Redacted is what a password is replaced by.
const Redacted = "REDACTED"

// MinScrubLen is the shortest password Scrub replaces wherever its text
// appears. A shorter one would match inside ordinary words ("n" in
// "connect") and the REDACTED marks left behind would spell it out, while
// hiding a one-to-three-character password protects nothing. Such a
// password is still removed wherever it sits in a target or connection
// string (Redact), which is where oltplab ever has one.
const MinScrubLen = 4

// secretParams are the query parameters and connection-string keywords
// whose value is a secret. The match is exact (case aside), so
// allowCleartextPasswords=1 is not a password.
var secretParams = map[string]bool{"password": true, "sslpassword": true}

// isSecretParam reports whether a URL query key or keyword holds a secret.
func isSecretParam(key string) bool { return secretParams[strings.ToLower(key)] }

var (
	// User information with a password: "user:pass@" after an optional
	// "scheme:" and "//", also in the opaque "postgres:user:pass@host"
	// form and without a scheme. The password runs to the last '@' before
	// a space, since a password may hold '@', '/' and '?': this redacts
	// too much rather than too little. It does not start with '/', or
	// "mysql://root@host" would read as user "mysql", password "//root". It does not start with '/', or
	// "mysql://root@host" would read as user "mysql", password "//root".
	userinfoRE = regexp.MustCompile(`(?i)((?:[a-z][a-z0-9+.-]*:)?(?://)?[^/?#@\s:]*:)((?:[^/\s][^\s]*)?)@`)
	// A secret query parameter: ?password=... or &password=...
	queryRE = regexp.MustCompile(`(?i)([?&;](?:ssl)?password=)([^&#\s]*)`)
	// A secret keyword of a keyword/value connection string: the value is
	// quoted ('...' with \' escapes) or not, and whatever follows up to
	// the next space goes too.
	keywordRE = regexp.MustCompile(`(?i)((?:^|[\s,;(])(?:ssl)?password\s*=\s*)((?:'(?:[^'\\]|\\.)*'?)?[^\s]*)`)
	// A secret key in JSON or YAML: "password": "..." or a bare value.
	jsonKeyRE = regexp.MustCompile(`(?i)(["'](?:ssl)?password["']\s*:\s*)((?:"(?:[^"\\]|\\.)*"?)?[^\s,}\]]*)`)
)

// Redact removes passwords from text that may hold targets or connection
// strings, by their structure: the password of a URL's user information
// (also in the opaque "postgres:user:pass@host" form), password query
// parameters and password keywords of keyword/value strings. It does not
// know which passwords exist; Scrub also removes known ones wherever they
// appear.
func Redact(s string) string {
	if !strings.ContainsAny(s, "@=:") {
		return s
	}
	s = userinfoRE.ReplaceAllString(s, "${1}"+Redacted+"@")
	s = queryRE.ReplaceAllString(s, "${1}"+Redacted)
	s = keywordRE.ReplaceAllString(s, "${1}"+Redacted)
	s = jsonKeyRE.ReplaceAllString(s, "${1}"+Redacted)
	return s
}

// Scrub is Redact followed by ScrubKnown: for messages and diagnostics.
func Scrub(s string, secrets ...Secret) string { return ScrubKnown(Redact(s), secrets...) }

// ScrubKnown replaces every occurrence of each secret at least
// MinScrubLen bytes long, and nothing else: for results and documents
// (JSON, CSV, HTML with its CSS), which structural redaction could
// mistake for connection strings. Longer secrets go first, so one that
// contains another is replaced whole.
func ScrubKnown(s string, secrets ...Secret) string {
	var long []string
	for _, sec := range secrets {
		if len(sec) >= MinScrubLen {
			long = append(long, string(sec))
		}
	}
	if len(long) == 0 {
		return s
	}
	// Longest first: "hunter2hunter2" before "hunter2".
	for i := 1; i < len(long); i++ {
		for j := i; j > 0 && len(long[j]) > len(long[j-1]); j-- {
			long[j], long[j-1] = long[j-1], long[j]
		}
	}
	for _, sec := range long {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return s
}
