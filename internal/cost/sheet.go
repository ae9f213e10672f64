package cost

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/yamldoc"
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
// the field (target.section.key) and its line. The file is decoded as a
// plan is (internal/yamldoc): strictly, with merge keys (<<: *anchor).
func ParseSheet(data []byte) (Sheet, error) { return ParseSheetPriced(data, nil) }

// ParseSheetPriced is ParseSheet with a price list: the cloud instances
// the file names by instance_type are priced from l (PriceList.Apply)
// before the prices are validated. l may be nil.
func ParseSheetPriced(data []byte, l *PriceList) (Sheet, error) {
	root, err := yamldoc.Parse("", data)
	if err != nil {
		return nil, sheetError("", err)
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Msg: "must map target names to their prices (name: {currency: ..., years: ...})"}
	}
	d := &yamldoc.Decoder{}
	entries, err := d.Entries(root, "")
	if err != nil {
		return nil, sheetError("", err)
	}
	var s Sheet
	for _, e := range entries {
		var p Prices
		if err := d.Decode(e.Value, &p, ""); err != nil {
			return nil, sheetError(e.Key.Value, err)
		}
		s = append(s, Named{Name: e.Key.Value, Prices: p})
	}
	for i := range s {
		n := &s[i]
		if l != nil {
			if err := l.Apply(&n.Prices); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.Path = append([]string{n.Name}, e.Path...)
				}
				return nil, Locate(err, root)
			}
		}
		if err := n.Prices.validate([]string{n.Name}); err != nil {
			return nil, Locate(err, root)
		}
	}
	return s, nil
}

// sheetError makes the strict decoder's complaint about target's prices
// ("" for the whole file) an *Error naming the field at its line.
func sheetError(target string, err error) error {
	var ye *yamldoc.Error
	if !errors.As(err, &ye) {
		return err
	}
	var path []string
	if target != "" {
		path = append(path, target)
	}
	if ye.Path != "" {
		path = append(path, strings.Split(ye.Path, ".")...)
	}
	e := &Error{Path: path, Line: ye.Line}
	msg := ye.Err.Error()
	switch {
	case errors.Is(ye.Err, yamldoc.ErrEmpty):
		e.Msg = "is empty: expected target names mapped to their prices"
	case errors.Is(ye.Err, yamldoc.ErrSyntax):
		e.Msg = "is not valid YAML: " + strings.TrimPrefix(msg, yamldoc.ErrSyntax.Error()+": ")
	case errors.Is(ye.Err, yamldoc.ErrUnknownField):
		e.Msg = "is not a known field" + strings.TrimPrefix(msg, yamldoc.ErrUnknownField.Error())
	case errors.Is(ye.Err, yamldoc.ErrGivenTwice):
		e.Msg = "is given twice"
	default:
		e.Msg = "has a value of the wrong type: " + msg
	}
	return e
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

// LocateIn is Locate on the prices file data that err came from (a
// Sheet's target names are its top-level keys).
func LocateIn(err error, data []byte) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return err
	}
	return Locate(err, &doc)
}
