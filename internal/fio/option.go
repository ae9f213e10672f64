package fio

import (
	"fmt"
	"strings"
)

// Option is one fio job option, passed to fio as --Key=Value.
type Option struct {
	Key, Value string
}

func (o Option) String() string { return o.Key + "=" + o.Value }

// MarshalText stores an option as "key=value".
func (o Option) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads "key=value" of the shape ParseOption checks; the
// options oltplab sets itself are accepted (they are in every stored
// profile).
func (o *Option) UnmarshalText(b []byte) error {
	p, err := parseOption(string(b))
	if err != nil {
		return err
	}
	*o = p
	return nil
}

// reserved are the options a Bench sets itself: where the test file is,
// how big, how long, how fio reports and how its jobs run. Overriding
// them would measure another file or break the parsing.
var reserved = map[string]string{
	"name":            "the profile names the job",
	"filename":        "the test file is placed by oltplab",
	"directory":       "give the directory as the argument",
	"filename_format": "the test file is placed by oltplab",
	"opendir":         "the test file is placed by oltplab",
	"nrfiles":         "one test file is used",
	"size":            "use --size",
	"filesize":        "use --size",
	"io_size":         "use --runtime",
	"runtime":         "use --runtime",
	"time_based":      "profiles are time based",
	"output":          "oltplab reads fio's output itself",
	"output-format":   "oltplab reads fio's JSON output",
	"thread":          "jobs run as threads so that stopping fio stops them all",
	"create_only":     "oltplab lays the file out itself",
	"unlink":          "oltplab removes the test file itself",
	"exitall":         "each profile is one fio run",
}

// ParseOption parses "key=value", the shape of --fio-option. The key is a
// fio job option name (lower case letters, digits, underscores); the value
// is not empty and has no control characters. Options oltplab sets itself
// are refused with the reason.
func ParseOption(s string) (Option, error) {
	o, err := parseOption(s)
	if err != nil {
		return Option{}, err
	}
	if why, ok := reserved[o.Key]; ok {
		return Option{}, inputErrorf("fio option %q: %s is set by oltplab (%s)", s, o.Key, why)
	}
	return o, nil
}

// parseOption checks the shape of "key=value".
func parseOption(s string) (Option, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Option{}, inputErrorf("fio option %q: want KEY=VALUE, e.g. rwmixread=50", s)
	}
	k = strings.TrimPrefix(k, "--")
	if k == "" {
		return Option{}, inputErrorf("fio option %q: empty key", s)
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return Option{}, inputErrorf("fio option %q: key %q is not a fio option name (lower case letters, digits, _)", s, k)
		}
	}
	if v == "" {
		return Option{}, inputErrorf("fio option %q: empty value", s)
	}
	for _, r := range v {
		if r < ' ' || r == 0x7f {
			return Option{}, inputErrorf("fio option %q: value has a control character", s)
		}
	}
	return Option{Key: k, Value: v}, nil
}

// InputError is a problem with what the caller asked for (a profile name,
// an option, a size, the directory): the user can fix it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}
