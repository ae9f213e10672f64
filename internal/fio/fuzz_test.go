package fio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever fio prints, Parse returns a report or an error and
// never panics. Seeded with the recorded outputs in testdata/.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("note: something\n{\"jobs\": []}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(bytes.NewReader(data))
	})
}

// FuzzParseOptionAndSize: fio options and sizes given on the command
// line or in a plan never panic; a size that parses is not negative.
func FuzzParseOptionAndSize(f *testing.F) {
	for _, s := range []string{"bs=4k", "rw=randread", "iodepth=32", "size=1g", "4k", "1.5M", "", "=", "9999999999999999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseOption(s)
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d, a negative size", s, n)
		}
	})
}
