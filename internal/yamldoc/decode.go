package yamldoc

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Error is a mistake in a YAML document: where it is (file, line, the
// field's path such as targets[1].cpus) and what is wrong. Err may wrap a
// typed error of another package (an instance error for a missing binary
// or an unusable directory) whose kind decides the exit code.
type Error struct {
	File string
	Line int    // 0 when the mistake has no line (a missing field)
	Path string // "" for the whole document
	Err  error
}

func (e *Error) Error() string {
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

func (e *Error) Unwrap() error { return e.Err }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	// ErrSyntax: the document is not valid YAML.
	ErrSyntax = errors.New("not valid YAML")
	// ErrEmpty: the document holds nothing (ErrSyntax too).
	ErrEmpty = errors.New("the file is empty")
	// ErrUnknownField: a mapping key names no field.
	ErrUnknownField = errors.New("unknown field")
	// ErrGivenTwice: a mapping gives one key twice.
	ErrGivenTwice = errors.New("given twice")
)

// Decoder decodes YAML nodes into Go values strictly: a mapping key that
// names no field is an error (with the field it most likely meant), a
// scalar of the wrong type is an error naming the type wanted, and every
// error is an *Error with the node's line and the value's path in the
// document (targets[1].io_limit.write_iops). Merge keys (<<: *anchor)
// add the anchor's keys a mapping does not give itself.
type Decoder struct {
	File string // the document's file, for errors

	// merged holds the entries of each mapping a merge key has brought
	// in, worked out once: anchors that merge anchors many times over
	// cost no more than their keys.
	merged map[*yaml.Node][]Entry
}

// NodeDecoder is implemented by option types whose YAML takes more than
// one shape (a virtual-user sequence written as a list or a string).
type NodeDecoder interface {
	DecodeNode(d *Decoder, n *yaml.Node, path string) error
}

// Decode decodes n into v (a pointer) strictly; path is n's place in the
// document.
func (d *Decoder) Decode(n *yaml.Node, v any, path string) error {
	return d.decode(n, reflect.ValueOf(v).Elem(), path)
}

// Errorf returns an *Error at n.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.File, Line: line, Path: path, Err: fmt.Errorf(format, args...)}
}

// Wrap returns err as an *Error at n, unless it is one already.
func (d *Decoder) Wrap(n *yaml.Node, path string, err error) error {
	var ye *Error
	if errors.As(err, &ye) {
		return err
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.File, Line: line, Path: path, Err: err}
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	nodeDecoderType = reflect.TypeFor[NodeDecoder]()
	nodeType        = reflect.TypeFor[yaml.Node]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// Parse parses src into the node of its document, turning the parser's
// "yaml: line N: ..." into an *Error at that line wrapping ErrSyntax.
func Parse(file string, src []byte) (*yaml.Node, error) {
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
		return nil, &Error{File: file, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, msg)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{File: file, Err: fmt.Errorf("%w: %w", ErrSyntax, ErrEmpty)}
	}
	return doc.Content[0], nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+):`)

// DecodeValue decodes n into v, which must be settable; path is n's place
// in the document.
func (d *Decoder) DecodeValue(n *yaml.Node, v reflect.Value, path string) error {
	return d.decode(n, v, path)
}

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
		if IsNull(n) {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), path)
	}
	if v.CanAddr() && v.Addr().Type().Implements(yamlUnmarshaler) {
		return d.decodeUnmarshaler(n, v.Addr().Interface().(yaml.Unmarshaler), path)
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode || IsNull(n) {
			return d.Errorf(n, path, "want a single value, got %s", Describe(n))
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return d.Wrap(n, path, err)
		}
		return nil
	}
	if v.Type() == durationType {
		if n.Kind != yaml.ScalarNode || IsNull(n) {
			return d.Errorf(n, path, "want a duration such as 30s or 2m, got %s", Describe(n))
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
			return d.Errorf(n, path, "want a list, got %s", Describe(n))
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
		if n.Kind != yaml.ScalarNode || IsNull(n) {
			return d.Errorf(n, path, "want a single value, got %s", Describe(n))
		}
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		b, ok := scalarBool(n)
		if !ok {
			return d.Errorf(n, path, "want true or false, got %s", Describe(n))
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return d.Errorf(n, path, "want a whole number, got %s", Describe(n))
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil {
			return d.Errorf(n, path, "want a whole number that fits, got %s", n.Value)
		}
		v.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return d.Errorf(n, path, "want a whole number, got %s", Describe(n))
		}
		u, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil {
			return d.Errorf(n, path, "want a non-negative whole number that fits, got %s", n.Value)
		}
		v.SetUint(u)
		return nil
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return d.Errorf(n, path, "want a number, got %s", Describe(n))
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
			return d.Wrap(n, path, err)
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	}
	return d.Errorf(n, path, "cannot decode into %s", v.Type())
}

// decodeUnmarshaler decodes n with a type's own UnmarshalYAML (a value
// written as text or as a mapping of its own keys, such as a latency
// layer's settings): a mapping's keys are checked first as every
// mapping's are (a key given twice is an error at its line; merge keys
// add theirs), and the type is given the mapping of its entries, whose
// keys and values it checks itself. Its error is placed at n.
func (d *Decoder) decodeUnmarshaler(n *yaml.Node, u yaml.Unmarshaler, path string) error {
	if n.Kind == yaml.MappingNode {
		entries, err := d.Entries(n, path)
		if err != nil {
			return err
		}
		m := *n
		m.Content = make([]*yaml.Node, 0, 2*len(entries))
		for _, e := range entries {
			m.Content = append(m.Content, e.Key, e.Value)
		}
		n = &m
	}
	if err := u.UnmarshalYAML(n); err != nil {
		return d.Wrap(n, path, err)
	}
	return nil
}

func (d *Decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if IsNull(n) {
		return nil // an empty section keeps the defaults
	}
	if n.Kind != yaml.MappingNode {
		return d.Errorf(n, path, "want a mapping (field: value lines), got %s", Describe(n))
	}
	entries, err := d.Entries(n, path)
	if err != nil {
		return err
	}
	fields := Fields(v.Type())
	for _, e := range entries {
		key := e.Key.Value
		p := JoinPath(path, key)
		idx, ok := fields[key]
		if !ok {
			return d.Errorf(e.Key, p, "%w%s", ErrUnknownField, Suggest(key, slices.Sorted(maps.Keys(fields))))
		}
		if err := d.decode(e.Value, v.FieldByIndex(idx), p); err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) error {
	if IsNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return d.Errorf(n, path, "want a mapping, got %s", Describe(n))
	}
	if v.Type().Key().Kind() != reflect.String {
		return d.Errorf(n, path, "cannot decode into %s", v.Type())
	}
	entries, err := d.Entries(n, path)
	if err != nil {
		return err
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, e := range entries {
		elem := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(e.Value, elem, JoinPath(path, e.Key.Value)); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(e.Key.Value).Convert(v.Type().Key()), elem)
	}
	return nil
}

// Entry is one key and its value in a mapping.
type Entry struct{ Key, Value *yaml.Node }

// maxMergeDepth bounds merge keys that merge mappings that merge others.
const maxMergeDepth = 16

// Entries lists the keys of mapping n with their values: its own, in
// order, then those its merge keys add (<<: *anchor, or a list of
// anchors), a key n gives itself or an earlier anchor gives taking
// precedence, as YAML's merge key does. A key n gives twice is an error.
func (d *Decoder) Entries(n *yaml.Node, path string) ([]Entry, error) {
	return d.entries(n, path, 0)
}

func (d *Decoder) entries(n *yaml.Node, path string, depth int) ([]Entry, error) {
	if depth > maxMergeDepth {
		return nil, d.Errorf(n, path, "merge keys (<<) nest more than %d deep", maxMergeDepth)
	}
	var own, merged []Entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			es, err := d.merge(v, path, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, es...)
			continue
		}
		if seen[k.Value] {
			return nil, d.Errorf(k, JoinPath(path, k.Value), "%w", ErrGivenTwice)
		}
		seen[k.Value] = true
		own = append(own, Entry{k, v})
	}
	for _, e := range merged {
		if !seen[e.Key.Value] {
			seen[e.Key.Value] = true
			own = append(own, e)
		}
	}
	return own, nil
}

// merge lists the entries a merge key's value adds: one mapping, or a
// list of mappings, the earlier taking precedence.
func (d *Decoder) merge(v *yaml.Node, path string, depth int) ([]Entry, error) {
	v = resolve(v)
	sources := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	var out []Entry
	for _, m := range sources {
		m = resolve(m)
		if m.Kind != yaml.MappingNode {
			return nil, d.Errorf(m, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", Describe(m))
		}
		es, done := d.merged[m]
		if !done {
			var err error
			if es, err = d.entries(m, path, depth+1); err != nil {
				return nil, err
			}
			if d.merged == nil {
				d.merged = map[*yaml.Node][]Entry{}
			}
			d.merged[m] = es
		}
		out = append(out, es...)
	}
	return out, nil
}

// resolve follows aliases (*anchor) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// OmitFields is implemented by a struct that embeds another with
// ",inline" but does not take all of its fields: it names, by their yaml
// names, the fields it leaves out. Decoder refuses them as unknown fields
// and Encode does not write them.
type OmitFields interface {
	OmitFields() []string
}

var omitFieldsType = reflect.TypeFor[OmitFields]()

// field is one yaml field of a struct type.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

// fields lists the yaml fields of struct type t in the order they are
// declared, those of structs embedded with ",inline" in their place. A
// name t's own fields give wins over an inlined one; the names t's
// OmitFields gives are left out; fields tagged "-" and unexported ones
// are not fields.
func fields(t reflect.Type) []field {
	own := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "-" && !(strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct) {
			own[fieldName(f, name)] = true
		}
	}
	omit := map[string]bool{}
	if reflect.PointerTo(t).Implements(omitFieldsType) {
		for _, name := range reflect.New(t).Interface().(OmitFields).OmitFields() {
			omit[name] = true
		}
	}
	var out []field
	seen := map[string]bool{}
	add := func(f field) {
		if !omit[f.name] && !seen[f.name] {
			seen[f.name] = true
			out = append(out, f)
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for _, in := range fields(f.Type) {
				if !own[in.name] {
					in.index = append([]int{i}, in.index...)
					add(in)
				}
			}
			continue
		}
		add(field{name: fieldName(f, name), index: []int{i}, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	return out
}

func fieldName(f reflect.StructField, tagged string) string {
	if tagged != "" {
		return tagged
	}
	return strings.ToLower(f.Name)
}

// Fields maps the yaml names of struct type t's fields (and of the fields
// of structs it embeds with ",inline", less those its OmitFields names)
// to their index paths.
func Fields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for _, f := range fields(t) {
		out[f.name] = f.index
	}
	return out
}

// Suggest names the closest known field, or lists them all, as the end of
// an error message: " (did you mean cpus?)".
func Suggest(key string, known []string) string {
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

// JoinPath is the path of key in the mapping at path.
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// IsNull reports whether n is null (nothing, ~ or null).
func IsNull(n *yaml.Node) bool {
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

// Describe names what a node is, for "want X, got Y".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}
