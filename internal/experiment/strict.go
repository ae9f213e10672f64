package experiment

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// PlanError is a mistake in a plan file: where it is (file, line, the
// field's path such as targets[1].cpus) and what is wrong. Err may wrap a
// typed error of another package (an instance error for a missing binary
// or an unusable directory) whose kind decides the exit code.
type PlanError struct {
	File string
	Line int    // 0 when the mistake has no line (a missing field)
	Path string // "" for the whole plan
	Err  error
}

func (e *PlanError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(oneLine(e.Err.Error()))
	return b.String()
}

func (e *PlanError) Unwrap() error { return e.Err }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	// ErrPlanSyntax: the plan is not valid YAML.
	ErrPlanSyntax = errors.New("not valid YAML")
	// ErrUnknownField: a mapping key names no field.
	ErrUnknownField = errors.New("unknown field")
)

// Decoder decodes YAML nodes into Go values strictly: a mapping key that
// names no field is an error (with the field it most likely meant), a
// scalar of the wrong type is an error naming the type wanted, and every
// error is a PlanError with the node's line and the value's path in the
// plan (targets[1].io_limit.write_iops). Step kinds decode their options
// with it.
type Decoder struct {
	File string // the plan file, for errors
}

// NodeDecoder is implemented by option types whose YAML takes more than
// one shape (a virtual-user sequence written as a list or a string).
type NodeDecoder interface {
	DecodeNode(d *Decoder, n *yaml.Node, path string) error
}

// Decode decodes n into v (a pointer) strictly; path is n's place in the
// plan.
func (d *Decoder) Decode(n *yaml.Node, v any, path string) error {
	return d.decode(n, reflect.ValueOf(v).Elem(), path)
}

// Errorf returns a PlanError at n.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &PlanError{File: d.File, Line: line, Path: path, Err: fmt.Errorf(format, args...)}
}

func (d *Decoder) wrap(n *yaml.Node, path string, err error) error {
	var pe *PlanError
	if errors.As(err, &pe) {
		return err
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	return &PlanError{File: d.File, Line: line, Path: path, Err: err}
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	nodeDecoderType = reflect.TypeFor[NodeDecoder]()
	nodeType        = reflect.TypeFor[yaml.Node]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// parseYAML parses src into its document node, turning the parser's
// "yaml: line N: ..." into a PlanError at that line.
func parseYAML(file string, src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = strings.TrimPrefix(msg[len(m[0]):], " ")
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, &PlanError{File: file, Line: line, Err: fmt.Errorf("%w: %s", ErrPlanSyntax, msg)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &PlanError{File: file, Err: fmt.Errorf("%w: the file is empty", ErrPlanSyntax)}
	}
	return doc.Content[0], nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+):`)

// decode decodes n into v.
func (d *Decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		return v.Addr().Interface().(NodeDecoder).DecodeNode(d, n, path)
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(*n))
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if isNull(n) {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), path)
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			return d.Errorf(n, path, "want a single value, got %s", describe(n))
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return d.wrap(n, path, err)
		}
		return nil
	}
	if v.Type() == durationType {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			return d.Errorf(n, path, "want a duration such as 30s or 2m, got %s", describe(n))
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			return d.Errorf(n, path, "want a duration such as 30s or 2m, got %q", n.Value)
		}
		v.SetInt(int64(dur))
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.decodeStruct(n, v, path)
	case reflect.Map:
		return d.decodeMap(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.Errorf(n, path, "want a list, got %s", describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			if err := d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull(n) {
			return d.Errorf(n, path, "want a single value, got %s", describe(n))
		}
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		b, ok := scalarBool(n)
		if !ok {
			return d.Errorf(n, path, "want true or false, got %s", describe(n))
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return d.Errorf(n, path, "want a whole number, got %s", describe(n))
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil {
			return d.Errorf(n, path, "want a whole number that fits, got %s", n.Value)
		}
		v.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return d.Errorf(n, path, "want a whole number, got %s", describe(n))
		}
		u, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil {
			return d.Errorf(n, path, "want a non-negative whole number that fits, got %s", n.Value)
		}
		v.SetUint(u)
		return nil
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return d.Errorf(n, path, "want a number, got %s", describe(n))
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return d.Errorf(n, path, "want a number, got %s", n.Value)
		}
		v.SetFloat(f)
		return nil
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			return d.wrap(n, path, err)
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	}
	return d.Errorf(n, path, "cannot decode into %s", v.Type())
}

func (d *Decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if isNull(n) {
		return nil // an empty section keeps the defaults
	}
	if n.Kind != yaml.MappingNode {
		return d.Errorf(n, path, "want a mapping (field: value lines), got %s", describe(n))
	}
	fields := yamlFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		p := joinPath(path, key)
		if seen[key] {
			return d.Errorf(k, p, "given twice")
		}
		seen[key] = true
		idx, ok := fields[key]
		if !ok {
			return d.Errorf(k, p, "%w%s", ErrUnknownField, suggest(key, slices.Sorted(mapKeys(fields))))
		}
		if err := d.decode(val, v.FieldByIndex(idx), p); err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.Errorf(n, path, "want a mapping, got %s", describe(n))
	}
	if v.Type().Key().Kind() != reflect.String {
		return d.Errorf(n, path, "cannot decode into %s", v.Type())
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := joinPath(path, k.Value)
		if seen[k.Value] {
			return d.Errorf(k, p, "given twice")
		}
		seen[k.Value] = true
		elem := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, elem, p); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	return nil
}

// yamlFields maps the yaml names of t's fields (and of the fields of
// structs embedded with ",inline") to their index paths.
func yamlFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for k, idx := range yamlFields(f.Type) {
				if _, own := out[k]; !own {
					out[k] = append([]int{i}, idx...)
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = []int{i}
	}
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// suggest names the closest known field, or lists them all.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func scalarBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	if err != nil {
		switch strings.ToLower(n.Value) {
		case "yes", "on":
			return true, true
		case "no", "off":
			return false, true
		}
		return false, false
	}
	return b, true
}

// describe names what a node is, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}
