package cost

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseSheet: whatever a prices file holds, ParseSheet returns a
// sheet or a *Error, and never panics. Seeded with the example prices.
func FuzzParseSheet(f *testing.F) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "licence-study.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(src)
	f.Add([]byte("prices: {currency: EUR}\n"))
	f.Add([]byte("a: {instance: {per_hour: -1}}\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseSheet(data); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %q is not a *cost.Error", err, err)
			}
		}
	})
}
