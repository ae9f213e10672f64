package cost

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestParseSheetErrors: a bad prices file is one error naming the field
// and its line.
func TestParseSheetErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       string
	}{
		{"unknown key", `
a:
  currency: USD
  years: 3
  db_licence:
    per_pack: 3717
    pack_core: 2
`, "line 7: a.db_licence.pack_core is not a known field (did you mean pack_cores?)"},
		{"unknown top-level key", `
a:
  currency: USD
  year: 3
`, "line 4: a.year is not a known field (did you mean years?)"},
		{"unknown key far from any", `
a:
  currency: USD
  flavour: red
`, "line 4: a.flavour is not a known field (known: cloud, cores, currency, db_licence, hardware, os, storage, years)"},
		{"a target's prices not a mapping", `
a: 12
`, `line 2: a has a value of the wrong type: want a mapping (field: value lines), got "12"`},
		{"wrong type", `
a:
  currency: USD
  years: 3
  hardware:
    price: lots
`, `line 6: a.hardware.price has a value of the wrong type: want a number, got "lots"`},
		{"missing currency, at the target's line", `
a:
  currency: USD
  years: 3
  hardware: {price: 1}
b:
  years: 3
  hardware: {price: 1}
`, "line 6: b.currency is required: an ISO 4217 code such as USD or EUR (it is never assumed)"},
		{"pack size 0, through an alias, at the anchor", `
a:
  currency: USD
  years: 3
  cores: 4
  db_licence: &std
    per_pack: 3717
    pack_cores: 0
b:
  currency: USD
  years: 3
  db_licence: *std
`, "line 8: a.db_licence.pack_cores must be at least 1 (cores per licence pack), not 0"},
		{"minimum below pack size", `
a:
  currency: USD
  years: 3
  db_licence: {per_pack: 3717, pack_cores: 4, min_cores_per_server: 2}
`, "line 5: a.db_licence.min_cores_per_server (2) must not be below pack_cores (4): the minimum is bought in whole packs"},
		{"negative price", `
a:
  currency: EUR
  years: 1
  cloud:
    per_hour: -1
`, "line 6: a.cloud.per_hour must not be negative, not -1"},
		{"not a mapping", `- a
- b
`, "line 1: must map target names to their prices (name: {currency: ..., years: ...})"},
		{"empty", ``, "is empty: expected target names mapped to their prices"},
		{"bad YAML", "a:\n  currency: USD\n   years: 3\n", "line 3: is not valid YAML: mapping values are not allowed in this context"},
		{"duplicate target", `
a: {currency: USD, years: 1, hardware: {price: 1}}
a: {currency: USD, years: 1, hardware: {price: 2}}
`, "line 3: a is given twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSheet([]byte(c.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want a *cost.Error", err, err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

// TestParseSheetOrderAndMerge: targets keep the file's order, and merge
// keys reuse a whole price list.
func TestParseSheetOrderAndMerge(t *testing.T) {
	s, err := ParseSheet([]byte(`
zeta: &base
  currency: USD
  years: 3
  cores: 2
  hardware: {price: 1000}
alpha:
  <<: *base
  cores: 8
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "zeta,alpha" {
		t.Errorf("order: got %s, want zeta,alpha", got)
	}
	a, _ := s.Lookup("alpha")
	if a.Cores != 8 || a.Currency != "USD" || a.Hardware == nil || a.Hardware.Price != 1000 {
		t.Errorf("merged alpha: got %+v", a)
	}
}

// TestLocate: a plan file validates its target's `prices` itself and
// finds the line with Locate.
func TestLocate(t *testing.T) {
	src := `
name: ssd-4c
prices:
  currency: USD
  years: 3
  db_licence:
    per_pack: 3717
    pack_cores: 0
`
	var target struct {
		Name   string `yaml:"name"`
		Prices Prices `yaml:"prices"`
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(src), &node); err != nil {
		t.Fatal(err)
	}
	if err := node.Decode(&target); err != nil {
		t.Fatal(err)
	}
	err := Locate(target.Prices.Validate(), &node)
	if got, want := err.Error(), "line 8: prices.db_licence.pack_cores must be at least 1 (cores per licence pack), not 0"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
