package dialect

import (
	"errors"
	"strings"
	"testing"
)

// TestBaselineMark: a mark reads back as written, an older oltplab's mark
// (the fingerprint alone) still reads as oltplab's, and anything else is
// no mark.
func TestBaselineMark(t *testing.T) {
	const fp = "built_at=2025-01-02T03:04:05.123Z seed=42"
	m := NewBaselineMark(fp)
	if len(m.ID) != 16 || m.Saved.IsZero() {
		t.Fatalf("new mark: %+v", m)
	}
	got, ok := ParseBaselineMark(m.String())
	if !ok || got != m {
		t.Errorf("round trip of %q: got %+v, %v; want %+v", m.String(), got, ok, m)
	}
	if got, ok := ParseBaselineMark("oltplab baseline " + fp); !ok || got.Fingerprint != fp || got.ID != "" {
		t.Errorf("an older mark: got %+v, %v", got, ok)
	}
	for _, s := range []string{"", "my backup of tpcc", "oltplab baseline", "oltplab baseline id=x saved=yesterday " + fp,
		"Oltplab baseline " + fp, "oltplab baseline id=abc " + fp + "\nmore"} {
		if _, ok := ParseBaselineMark(s); ok {
			t.Errorf("%q: read as a mark", s)
		}
	}
	err := NotOurs("drop baseline", "database tpcc_oltplab_base", "not dropped; drop it yourself if it is yours to lose")
	if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "database tpcc_oltplab_base was not created by oltplab (no mark): not dropped") {
		t.Errorf("NotOurs: %v", err)
	}
}
