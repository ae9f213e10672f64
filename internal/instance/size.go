package instance

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a number of bytes, written the way database settings write
// memory: "512MB", "1GiB", "64kB" or a plain number of bytes. Units are
// binary, as PostgreSQL and MariaDB read them: kB = KiB = 1024 bytes,
// MB = MiB, GB = GiB, TB = TiB. Plan files and flags parse it with
// ParseSize (it is an encoding.TextUnmarshaler).
type Size int64

var sizeUnits = []struct {
	names []string
	bytes int64
}{
	{[]string{"", "b"}, 1},
	{[]string{"k", "kb", "kib"}, 1 << 10},
	{[]string{"m", "mb", "mib"}, 1 << 20},
	{[]string{"g", "gb", "gib"}, 1 << 30},
	{[]string{"t", "tb", "tib"}, 1 << 40},
}

// ParseSize parses "512MB", "1.5GiB", "64 kB" or "1073741824" (bytes).
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	if num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (e.g. 512MB, 1GiB)", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: want a non-negative number with an optional unit (e.g. 512MB, 1GiB)", s)
	}
	for _, u := range sizeUnits {
		for _, n := range u.names {
			if unit == n {
				b := v * float64(u.bytes)
				if b > math.MaxInt64/2 {
					return 0, fmt.Errorf("size %q is too large", s)
				}
				return Size(math.Round(b)), nil
			}
		}
	}
	return 0, fmt.Errorf("size %q: unknown unit %q (want B, kB, MB, GB, TB or KiB, MiB, GiB, TiB)", s, unit)
}

// String writes the size with the largest binary unit that divides it.
func (s Size) String() string {
	for i := len(sizeUnits) - 1; i > 0; i-- {
		u := sizeUnits[i]
		if s != 0 && int64(s)%u.bytes == 0 {
			return strconv.FormatInt(int64(s)/u.bytes, 10) + map[int]string{1: "KiB", 2: "MiB", 3: "GiB", 4: "TiB"}[i]
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// Bytes is the size as a number of bytes.
func (s Size) Bytes() int64 { return int64(s) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseSize.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Set and Type make a *Size a command-line flag value.
func (s *Size) Set(v string) error { return s.UnmarshalText([]byte(v)) }

// Type names the flag value in help text.
func (s *Size) Type() string { return "size" }
