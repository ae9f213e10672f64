package cost

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sheet is a prices file: target names (profile labels) mapped to their
// Prices, in the order of the file.
//
//	hdd-16c:
//	  currency: USD
//	  years: 3
//	  cores: 16
//	  hardware: {price: 26385}
//	  db_licence: {edition: Standard, per_pack: 3717, pack_cores: 2, min_cores_per_server: 4}
type Sheet []Named

// Named is one target's prices in a Sheet.
type Named struct {
	Name   string
	Prices Prices
}

// Lookup returns the prices of the named target.
func (s Sheet) Lookup(name string) (Prices, bool) {
	for _, n := range s {
		if n.Name == name {
			return n.Prices, true
		}
	}
	return Prices{}, false
}

// Names lists the targets in file order.
func (s Sheet) Names() []string {
	out := make([]string, len(s))
	for i, n := range s {
		out[i] = n.Name
	}
	return out
}

// ParseSheet decodes and validates a prices file. Unknown keys, values
// of the wrong type and bad prices are returned as one *Error naming
// the field (target.section.key) and its line.
func ParseSheet(data []byte) (Sheet, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{Msg: "is empty: expected target names mapped to their prices"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Msg: "must map target names to their prices (name: {currency: ..., years: ...})"}
	}
	// Unknown keys first, by the struct's own yaml tags: the error names
	// the field's path and lists the keys that are known there.
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := knownFields(resolve(v), reflect.TypeFor[Prices](), []string{k.Value}); err != nil {
			return nil, err
		}
	}
	// Then the values, decoded strictly (types, duplicate keys).
	var byName map[string]Prices
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&byName); err != nil {
		return nil, decodeError(err, root)
	}
	var s Sheet
	for i := 0; i+1 < len(root.Content); i += 2 {
		name := root.Content[i].Value
		p := byName[name]
		if err := p.validate([]string{name}); err != nil {
			return nil, Locate(err, root)
		}
		s = append(s, Named{Name: name, Prices: p})
	}
	return s, nil
}

// Locate sets the Line of err, when it is an *Error, from the YAML
// mapping node its Path starts in: the line of the field, or of the
// nearest enclosing key when the field is missing. A plan file passes the
// mapping of the target that holds `prices`. Other errors are returned
// unchanged.
func Locate(err error, mapping *yaml.Node) error {
	var e *Error
	if !errors.As(err, &e) || e.Line > 0 || mapping == nil {
		return err
	}
	n := resolve(mapping)
	for _, key := range e.Path {
		k, v := lookupKey(n, key)
		if k == nil {
			break
		}
		e.Line = k.Line
		n = resolve(v)
	}
	return err
}

// resolve follows aliases (*anchor) and documents to the node they stand
// for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		default:
			return n
		}
	}
	return n
}

// lookupKey finds key in a mapping node, also through merge keys (<<).
func lookupKey(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag == "!!merge" {
			if k, v := lookupKey(resolve(n.Content[i+1]), key); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// knownFields reports the first key of n that t (a struct, or a pointer
// to one) has no yaml field for.
func knownFields(n *yaml.Node, t reflect.Type, path []string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil || n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil // wrong shapes are the strict decoder's to report
	}
	fields := map[string]reflect.Type{}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			if err := knownFields(resolve(v), t, path); err != nil {
				return err
			}
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			slices.Sort(names)
			return &Error{Path: sub(path, k.Value), Line: k.Line,
				Msg: "is not a known field (known here: " + strings.Join(names, ", ") + ")"}
		}
		if err := knownFields(resolve(v), ft, sub(path, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

// yamlLine is the "line N: " the YAML library puts before its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError turns a YAML syntax error into an *Error with its line.
func syntaxError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Line: line, Msg: "is not valid YAML: " + m[2]}
	}
	return &Error{Msg: "is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// decodeError turns the strict decoder's first complaint into an *Error
// naming the field at its line.
func decodeError(err error, root *yaml.Node) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return syntaxError(err)
	}
	m := yamlLine.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &Error{Msg: te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	e := &Error{Line: line, Msg: m[2]}
	if p := pathAtLine(root, nil, line); p != nil && strings.HasPrefix(m[2], "cannot unmarshal") {
		e.Path = p
		e.Msg = "has a value of the wrong type: " + m[2]
	}
	if n := len(te.Errors) - 1; n > 0 {
		e.Msg += fmt.Sprintf(" (and %d more)", n)
	}
	return e
}

// pathAtLine finds the key whose scalar value sits on line.
func pathAtLine(n *yaml.Node, path []string, line int) []string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		p := sub(path, k.Value)
		if v != nil && v.Kind == yaml.ScalarNode && v.Line == line {
			return p
		}
		if v != nil && v.Kind == yaml.SequenceNode && v.Line == line {
			return p
		}
		if got := pathAtLine(v, p, line); got != nil {
			return got
		}
	}
	return nil
}

// LocateIn is Locate on the prices file data that err came from (a
// Sheet's target names are its top-level keys).
func LocateIn(err error, data []byte) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return err
	}
	return Locate(err, &doc)
}
