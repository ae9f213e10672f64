package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a message may echo back of the user's input, or of text oltplab
// did not write itself (labels and targets read from the store, server
// messages): never a whole 200 KB argument, never an escape sequence that
// would drive the terminal, never a line break inside a one-line error.

const (
	// maxEcho bounds one echoed value, in bytes.
	maxEcho = 200
	// maxErrorLine bounds the whole one-line error exit prints.
	maxErrorLine = 2000
	// maxLabel is the longest --label accepted.
	maxLabel = 100
)

// cut returns s if it is at most n bytes long, else its first n bytes (not
// splitting a character) and how much was left out.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s... (%d bytes cut)", s[:i], len(s)-i)
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

// printable replaces control characters (escape sequences, line breaks,
// tabs) and invalid UTF-8 by their Go escapes, so text read from the store
// prints as text.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
			b.WriteRune(r)
		case unicode.IsControl(r):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quoted is s cut to maxEcho bytes and quoted, for echoing one value the
// user gave.
func quoted(s string) string { return fmt.Sprintf("%q", cut(s, maxEcho)) }

// checkLabel refuses labels that would not print as one short word of
// plain text.
func checkLabel(cmd, label string) error {
	if p := labelProblem(label); p != "" {
		return usageErrorf("%s: --label %s", cmd, p)
	}
	return nil
}

// labelProblem says why a label (given on the command line, or read from
// a saved result) would not print as one short word of plain text; ""
// when it would. Markup is refused so that no label reads as HTML in a
// report, a terminal or a page that forgot to escape it.
func labelProblem(label string) string {
	switch {
	case len(label) > maxLabel:
		return fmt.Sprintf("is %d bytes long; at most %d", len(label), maxLabel)
	case !utf8.ValidString(label) || printable(label) != label:
		return fmt.Sprintf("%s holds control characters or invalid UTF-8", quoted(label))
	case strings.ContainsAny(label, "<>&"):
		return fmt.Sprintf("%s holds markup (<, > or &)", quoted(label))
	}
	return ""
}
