package yamldoc

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// Encode returns v as a YAML node that Decoder reads back into an equal
// value: struct fields under the names Decoder knows (yaml tags, structs
// embedded with ",inline", less what OmitFields leaves out; a field
// tagged ",omitempty" is left out when zero), durations as 1m30s, values
// with MarshalText as their text, map keys sorted, lists of scalars in
// flow style ([a, b]).
func Encode(v any) (*yaml.Node, error) {
	return encode(reflect.ValueOf(v))
}

// Marshal writes n as a YAML document indented by two spaces, with
// comment (lines starting with "#") above it.
func Marshal(n *yaml.Node, comment string) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}
	if comment != "" {
		c := *n
		c.HeadComment = comment
		doc.Content[0] = &c
	}
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encode(v reflect.Value) (*yaml.Node, error) {
	if !v.IsValid() {
		return null(), nil
	}
	if v.Type() == nodeType {
		n := v.Interface().(yaml.Node)
		return &n, nil
	}
	if v.Type().Implements(textMarshaler) && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		text, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil, err
		}
		return str(string(text)), nil
	}
	if v.Type() == durationType {
		return str(time.Duration(v.Int()).String()), nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return null(), nil
		}
		return encode(v.Elem())
	case reflect.Struct:
		if v.CanAddr() && v.Addr().Type().Implements(textMarshaler) {
			return encode(v.Addr())
		}
		return encodeStruct(v)
	case reflect.Map:
		return encodeMap(v)
	case reflect.Slice, reflect.Array:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for i := range v.Len() {
			e, err := encode(v.Index(i))
			if err != nil {
				return nil, err
			}
			if e.Kind != yaml.ScalarNode {
				seq.Style = 0
			}
			seq.Content = append(seq.Content, e)
		}
		return seq, nil
	case reflect.String:
		return str(v.String()), nil
	case reflect.Bool:
		return scalar(strconv.FormatBool(v.Bool())), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		return scalar(strconv.FormatFloat(v.Float(), 'g', -1, 64)), nil
	}
	return nil, fmt.Errorf("yamldoc: cannot encode a %s", v.Type())
}

// encodeStruct writes a copy of v when v cannot be addressed, so that
// methods with pointer receivers (MarshalText) are found.
func encodeStruct(v reflect.Value) (*yaml.Node, error) {
	if !v.CanAddr() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && fv.IsZero() {
			continue
		}
		n, err := encode(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		m.Content = append(m.Content, str(f.name), n)
	}
	return m, nil
}

func encodeMap(v reflect.Value) (*yaml.Node, error) {
	if v.Type().Key().Kind() != reflect.String {
		return nil, fmt.Errorf("yamldoc: cannot encode a %s", v.Type())
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
	for _, k := range keys {
		n, err := encode(v.MapIndex(k))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.String(), err)
		}
		m.Content = append(m.Content, str(k.String()), n)
	}
	return m, nil
}

// str is a string scalar, quoted when written only if it would otherwise
// read as another type (yes, 1.5, null).
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// scalar is a number or a boolean, written as it reads.
func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func null() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }
