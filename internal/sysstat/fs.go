package sysstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FS reads host facts below a root directory: "/" on a live host, a
// captured tree (with proc/, sys/, etc/) in tests.
type FS struct {
	root string
}

// NewFS returns an FS rooted at root.
func NewFS(root string) FS { return FS{root: root} }

// live is the running host.
var live = NewFS("/")

func (fs FS) path(elem ...string) string {
	return filepath.Join(append([]string{fs.root}, elem...)...)
}

func (fs FS) open(elem ...string) (*os.File, error) {
	f, err := os.Open(fs.path(elem...))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(elem...), err)
	}
	return f, nil
}

// readString returns a small file's content without surrounding space, or
// "" when it cannot be read (sysfs attributes are often absent).
func (fs FS) readString(elem ...string) string {
	b, err := os.ReadFile(fs.path(elem...))
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// parseUints parses fields into dst, stopping at the shorter of the two.
func parseUints(fields []string, dst ...*uint64) error {
	for i, f := range fields {
		if i >= len(dst) {
			break
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return fmt.Errorf("field %d %q: %w", i+1, f, err)
		}
		*dst[i] = v
	}
	return nil
}

// unescapeOctal undoes the \NNN escapes the kernel writes for space, tab,
// newline and backslash in mount paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
