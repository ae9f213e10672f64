package yamldoc

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type Shared struct {
	Rampup time.Duration `yaml:"rampup"`
	Grace  time.Duration `yaml:"grace"`
	Seed   uint64        `yaml:"seed,omitempty"`
}

type size int64

func (s size) MarshalText() ([]byte, error) { return []byte(time.Duration(s).String()), nil }
func (s *size) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	*s = size(d)
	return err
}

type options struct {
	Name   string `yaml:"name"`
	Shared `yaml:",inline"`
	Grace  string            `yaml:"grace"` // the struct's own field wins over the inlined one
	Tags   []string          `yaml:"tags"`
	Limits map[string]int    `yaml:"limits,omitempty"`
	Size   size              `yaml:"size"`
	Ratio  float64           `yaml:"ratio"`
	On     bool              `yaml:"on,omitempty"`
	Nested *struct{ X int }  `yaml:"nested,omitempty"`
	Extra  map[string]string `yaml:"extra,omitempty"`
}

// OmitFields: options does not take Shared's seed.
func (options) OmitFields() []string { return []string{"seed"} }

func decode(t *testing.T, src string, v any) error {
	t.Helper()
	n, err := Parse("doc.yaml", []byte(src))
	if err != nil {
		return err
	}
	return (&Decoder{File: "doc.yaml"}).Decode(n, v, "")
}

// TestFields: inlined fields in place, a struct's own name first, and
// what OmitFields names left out.
func TestFields(t *testing.T) {
	var names []string
	for _, f := range fields(reflect.TypeFor[options]()) {
		names = append(names, f.name)
	}
	if got, want := strings.Join(names, " "), "name rampup grace tags limits size ratio on nested extra"; got != want {
		t.Errorf("fields: got %q, want %q", got, want)
	}
	if idx := Fields(reflect.TypeFor[options]())["grace"]; len(idx) != 1 {
		t.Errorf("grace: got index %v, want the struct's own field", idx)
	}
}

// TestDecodeErrors: each mistake is one *Error at its line and path.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
		is              error
	}{
		{"omitted field", "name: a\nseed: 3\n", "doc.yaml:2: seed: unknown field (known: extra, grace, limits, name, nested, on, rampup, ratio, size, tags)", ErrUnknownField},
		{"unknown field", "name: a\nrampupp: 3s\n", "doc.yaml:2: rampupp: unknown field (did you mean rampup?)", ErrUnknownField},
		{"twice", "name: a\nname: b\n", "doc.yaml:2: name: given twice", ErrGivenTwice},
		{"wrong type", "ratio: lots\n", `doc.yaml:1: ratio: want a number, got "lots"`, nil},
		{"bad duration", "rampup: soon\n", `doc.yaml:1: rampup: want a duration such as 30s or 2m, got "soon"`, nil},
		{"merge of a scalar", "a: &a 1\nname: x\n<<: *a\n", "doc.yaml:1: a merge key (<<) takes a mapping or a list of mappings, got \"1\"", nil},
		{"syntax", "name: [a\n", "doc.yaml:1: not valid YAML", ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o options
			err := decode(t, c.src, &o)
			var ye *Error
			if !errors.As(err, &ye) {
				t.Fatalf("got %v (%T), want an *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %q\nwant %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
		})
	}
}

// TestMergeKeys: a merge key adds the anchor's keys a mapping does not
// give itself, an earlier anchor of a list first; a merge that merges
// itself is refused, not followed for ever.
func TestMergeKeys(t *testing.T) {
	src := `base: &base {name: base, rampup: 5s, tags: [x]}
more: &more {name: more, ratio: 0.5, grace: g}
it:
  <<: [*base, *more]
  rampup: 7s
`
	var doc struct {
		Base, More map[string]any
		It         options `yaml:"it"`
	}
	if err := decode(t, src, &doc); err != nil {
		t.Fatal(err)
	}
	it := doc.It
	if it.Name != "base" || it.Rampup != 7*time.Second || it.Ratio != 0.5 || it.Grace != "g" || len(it.Tags) != 1 {
		t.Errorf("merged: got %+v", it)
	}
	var loop map[string]map[string]any
	err := decode(t, "a: &a\n  x: 1\n  <<: *a\n", &loop)
	if err == nil || !strings.Contains(err.Error(), "nest more than") {
		t.Errorf("a mapping merging itself: got %v", err)
	}
}

// TestEncodeRoundTrip: what Encode writes, Decoder reads back equal,
// strings that would read as something else included.
func TestEncodeRoundTrip(t *testing.T) {
	in := options{Name: "yes", Shared: Shared{Rampup: 90 * time.Second, Grace: 0, Seed: 7}, Grace: "a: b #c",
		Tags: []string{"1.5", "null", "*x", "- y", "plain"}, Limits: map[string]int{"b": 2, "a": 1}, Size: size(time.Minute),
		Ratio: 5, Extra: map[string]string{"on": "off"}}
	n, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Marshal(n, "# a comment")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "# a comment\nname: yes\n") || strings.Contains(string(src), "seed") ||
		strings.Contains(string(src), "nested") || !strings.Contains(string(src), "limits:\n  a: 1\n  b: 2\n") {
		t.Errorf("encoded:\n%s", src)
	}
	var out options
	if err := decode(t, string(src), &out); err != nil {
		t.Fatalf("decode %s: %v", src, err)
	}
	in.Seed = 0 // left out: OmitFields
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v\n%s", out, in, src)
	}
}

// TestEncodeFlowLists: lists of scalars are written [a, b]; lists of
// mappings one item per line.
func TestEncodeFlowLists(t *testing.T) {
	n, err := Encode(map[string]any{"steps": []string{"build", "profile"}, "targets": []map[string]int{{"a": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	src, err := Marshal(n, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(src), "steps: [build, profile]\ntargets:\n  - a: 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(src, &node); err != nil {
		t.Error(err)
	}
}

// TestMergeKeysBounded: anchors that merge anchors many times over are
// worked out once each: 15 levels of 30 merges each (30^15 expansions,
// were each merge expanded again) decode into the one key they carry.
func TestMergeKeysBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("m0: &m0 {name: x}\n")
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&b, "m%d: &m%d\n  <<: [", i, i)
		for j := range 30 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*m%d", i-1)
		}
		b.WriteString("]\n")
	}
	var doc map[string]options
	if err := decode(t, b.String(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 16 || doc["m15"].Name != "x" {
		t.Errorf("got %d mappings, m15 %+v", len(doc), doc["m15"])
	}
}
