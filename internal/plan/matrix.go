package plan

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// matrixFile is a plan's matrix: the instance fields every target starts
// from (engine included), the axes whose values multiply into targets, a
// template for their names and prices for all of them.
//
//	matrix:
//	  engine: postgres
//	  memory: 256MB
//	  axes:
//	    data_dir: [/dev/shm/oltplab, /var/tmp/oltplab]
//	    io_limit: [{}, {name: hdd, value: {read_iops: 200, write_iops: 200}}]
//	    dram:            # an axis whose values each set several fields
//	      - {name: 1GB, set: {memory_limit: 1GB, memory: 256MB}}
//	      - {name: 2GB, set: {memory_limit: 2GB, memory: 512MB}}
//	  name: "{data_dir}-{io_limit}-{dram}"
type matrixFile struct {
	// Name is the template of the targets' names: {AXIS} stands for the
	// label of that axis's value. Default: the labels joined by "-".
	Name     string       `yaml:"name"`
	Instance matrixFields `yaml:",inline"`
	Axes     yaml.Node    `yaml:"axes"`
	Prices   *cost.Prices `yaml:"prices"`
}

// matrixFields are the fields a matrix gives every target and its axes
// vary: the instance's, and the cloud instance type it is priced as.
type matrixFields struct {
	InstanceSpec `yaml:",inline"`
	InstanceType string `yaml:"instance_type"`
}

// notAxes are instance fields that cannot vary across a matrix.
var notAxes = map[string]bool{"name": true, "max_connections": true, "bin_dir": true, "port": true}

type axisValue struct {
	label string
	node  *yaml.Node // the value as written, for errors
	// sets are the fields the value sets: the axis's own field for a
	// plain value, those of its set: mapping otherwise.
	sets []fieldValue
}

// fieldValue is one instance field an axis value sets.
type fieldValue struct {
	field string
	node  *yaml.Node
	path  string
}

type axis struct {
	name   string
	key    *yaml.Node
	values []axisValue
}

// expandMatrix turns the matrix into one target per combination of axis
// values, in the order written (the first axis varies slowest). Each
// target's directories are its own: DATA_DIR/TARGET (and WAL_DIR/TARGET),
// so that the same data_dir value can hold several targets.
func expandMatrix(d *yamldoc.Decoder, p *Plan, n *yaml.Node) ([]*TargetSpec, error) {
	var m matrixFile
	if err := d.Decode(n, &m, "matrix"); err != nil {
		return nil, err
	}
	if m.Instance.Engine == "" {
		return nil, d.Errorf(n, "matrix.engine", "required: the engine every target of the matrix runs (postgres, mariadb or sqlite)")
	}
	axesNode := valueNode(n, "axes")
	if m.Axes.Kind != yaml.MappingNode || len(m.Axes.Content) == 0 {
		return nil, d.Errorf(orRoot(axesNode, n), "matrix.axes", "required: at least one instance field with a list of values (e.g. memory: [128MB, 1GB])")
	}
	fields := yamldoc.Fields(reflect.TypeFor[matrixFields]())
	var allowed []string
	for f := range fields {
		if !notAxes[f] {
			allowed = append(allowed, f)
		}
	}
	slices.Sort(allowed)
	var axes []axis
	// The targets are counted before any is built: the product of the
	// axes' lengths, at most room (MaxTargets less the explicit ones).
	room := MaxTargets - len(p.Targets)
	combinations := 1
	for i := 0; i+1 < len(m.Axes.Content); i += 2 {
		k, v := m.Axes.Content[i], m.Axes.Content[i+1]
		path := "matrix.axes." + k.Value
		_, isField := fields[k.Value]
		if notAxes[k.Value] || (!isField && !setsFields(v)) {
			return nil, d.Errorf(k, path, "not an axis%s (an axis is an instance field, or a name whose values each set several: {name: LABEL, set: {memory: 256MB, memory_limit: 1GB}})",
				yamldoc.Suggest(k.Value, allowed))
		}
		if !isField && !namePattern.MatchString(k.Value) {
			return nil, d.Errorf(k, path, "axis name %q: %s", k.Value, nameRule)
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, d.Errorf(v, path, "want a list of values, got %s", yamldoc.Describe(v))
		}
		if len(v.Content) > room/combinations {
			return nil, d.Errorf(v, path, "%d values make more than %d targets with the axes before it; a plan has at most %d targets",
				len(v.Content), room, MaxTargets)
		}
		combinations *= len(v.Content)
		a := axis{name: k.Value, key: k}
		for j, e := range v.Content {
			vpath := fmt.Sprintf("%s[%d]", path, j)
			av, err := axisEntry(d, e, vpath, k.Value, isField, fields)
			if err != nil {
				return nil, err
			}
			a.values = append(a.values, av)
		}
		if err := labelPaths(d, &a, path); err != nil {
			return nil, err
		}
		axes = append(axes, a)
	}
	if err := checkAxesDisjoint(d, axes); err != nil {
		return nil, err
	}

	var out []*TargetSpec
	idx := make([]int, len(axes))
	for {
		t, err := matrixTarget(d, p, n, m, axes, idx, fields)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		// Next combination: the last axis varies fastest.
		k := len(axes) - 1
		for k >= 0 {
			idx[k]++
			if idx[k] < len(axes[k].values) {
				break
			}
			idx[k] = 0
			k--
		}
		if k < 0 {
			break
		}
	}
	seen := map[string]bool{}
	for _, t := range out {
		if seen[t.Name] {
			return nil, d.Errorf(orRoot(valueNode(n, "name"), n), "matrix.name",
				"two targets get the name %q: the name must use every axis with more than one value", t.Name)
		}
		seen[t.Name] = true
	}
	return out, nil
}

// matrixTarget builds the target of one combination of axis values.
func matrixTarget(d *yamldoc.Decoder, p *Plan, n *yaml.Node, m matrixFile, axes []axis, idx []int, fields map[string][]int) (*TargetSpec, error) {
	spec := m.Instance
	spec.Settings = maps.Clone(m.Instance.Settings)
	labels := map[string]string{}
	var parts []string
	for ai, a := range axes {
		v := a.values[idx[ai]]
		for _, fv := range v.sets {
			f := reflect.ValueOf(&spec).Elem().FieldByIndex(fields[fv.field])
			if err := d.DecodeValue(fv.node, f, fv.path); err != nil {
				return nil, err
			}
		}
		labels[a.name] = v.label
		parts = append(parts, v.label)
	}
	name := strings.Join(parts, "-")
	if m.Name != "" {
		var bad string
		name = placeholder.ReplaceAllStringFunc(m.Name, func(ph string) string {
			l, ok := labels[ph[1:len(ph)-1]]
			if !ok && bad == "" {
				bad = ph
			}
			return l
		})
		if bad != "" {
			return nil, d.Errorf(valueNode(n, "name"), "matrix.name", "%s is not an axis of the matrix (axes: %s)", bad, strings.Join(slices.Sorted(maps.Keys(labels)), ", "))
		}
	}
	if !namePattern.MatchString(name) {
		return nil, d.Errorf(orRoot(valueNode(n, "name"), n), "matrix",
			"target name %q made from the axis values: %s; name the values ({name: LABEL, value: ...}) or set matrix.name", name, nameRule)
	}
	t := &TargetSpec{Name: name, Instance: spec.InstanceSpec, InstanceType: spec.InstanceType, Prices: m.Prices, Line: n.Line, Axes: labels,
		Path: "matrix", node: n}
	t.Path = "matrix (target " + name + ")"
	if err := t.priceInstance(d, p); err != nil {
		return nil, err
	}
	t.Path = "matrix"
	if err := t.checkPrices(d); err != nil {
		return nil, err
	}
	t.Path = "matrix (target " + name + ")"
	if t.Instance.DataDir == "" {
		return nil, d.Errorf(n, "matrix.data_dir", "required: where the targets' data lives (a field of the matrix or one of its axes)")
	}
	t.Instance.Name = name
	t.Instance.DataDir = filepath.Join(p.Resolve(t.Instance.DataDir), name)
	if t.Instance.WALDir != "" {
		t.Instance.WALDir = filepath.Join(p.Resolve(t.Instance.WALDir), name)
	}
	return t, nil
}

var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// axisEntry reads one value of an axis: the value itself, or
// {name: LABEL, value: VALUE} to give it a label of its own, or
// {name: LABEL, set: {FIELD: VALUE, ...}} for a value that sets several
// fields at once (the name is optional when every value set is a
// scalar: the label is then those values joined by '-').
func axisEntry(d *yamldoc.Decoder, e *yaml.Node, path, axisName string, isField bool, fields map[string][]int) (axisValue, error) {
	if set := valueNode(e, "set"); set != nil {
		return setEntry(d, e, set, path, fields)
	}
	if !isField {
		return axisValue{}, d.Errorf(e, path, "axis %s is not an instance field: want {name: LABEL, set: {FIELD: VALUE, ...}}, got %s", axisName, yamldoc.Describe(e))
	}
	plain := func(label string, node *yaml.Node) axisValue {
		return axisValue{label: label, node: node, sets: []fieldValue{{field: axisName, node: node, path: path}}}
	}
	if e.Kind == yaml.MappingNode && len(e.Content) == 4 {
		var name, value *yaml.Node
		for i := 0; i < 4; i += 2 {
			switch e.Content[i].Value {
			case "name":
				name = e.Content[i+1]
			case "value":
				value = e.Content[i+1]
			}
		}
		if name != nil && value != nil {
			if name.Kind != yaml.ScalarNode || !namePattern.MatchString(name.Value) {
				return axisValue{}, d.Errorf(name, path+".name", "want a label: %s", nameRule)
			}
			return plain(name.Value, value), nil
		}
	}
	switch {
	case yamldoc.IsNull(e) || (e.Kind == yaml.MappingNode && len(e.Content) == 0):
		return plain("none", e), nil
	case e.Kind == yaml.ScalarNode:
		return plain(sanitizeLabel(e.Value), e), nil
	}
	return axisValue{}, d.Errorf(e, path, "give this value a label: {name: LABEL, value: ...}")
}

// setEntry reads {name: LABEL, set: {FIELD: VALUE, ...}}: a value of an
// axis that moves several instance fields together.
func setEntry(d *yamldoc.Decoder, e, set *yaml.Node, path string, fields map[string][]int) (axisValue, error) {
	entries, err := d.Entries(e, path)
	if err != nil {
		return axisValue{}, err
	}
	var name *yaml.Node
	for _, en := range entries {
		switch en.Key.Value {
		case "name":
			name = en.Value
		case "set":
		default:
			return axisValue{}, d.Errorf(en.Key, path+"."+en.Key.Value, "%v%s", yamldoc.ErrUnknownField, yamldoc.Suggest(en.Key.Value, []string{"name", "set"}))
		}
	}
	if set.Kind != yaml.MappingNode || len(set.Content) == 0 {
		return axisValue{}, d.Errorf(set, path+".set", "want the instance fields this value sets (e.g. {memory: 256MB, memory_limit: 1GB}), got %s", yamldoc.Describe(set))
	}
	sets, err := d.Entries(set, path+".set")
	if err != nil {
		return axisValue{}, err
	}
	av := axisValue{node: e}
	var labels []string
	scalars := true
	for _, en := range sets {
		f := en.Key.Value
		fpath := path + ".set." + f
		if _, ok := fields[f]; !ok || notAxes[f] {
			var allowed []string
			for f := range fields {
				if !notAxes[f] {
					allowed = append(allowed, f)
				}
			}
			slices.Sort(allowed)
			return axisValue{}, d.Errorf(en.Key, fpath, "not a field an axis can set%s", yamldoc.Suggest(f, allowed))
		}
		av.sets = append(av.sets, fieldValue{field: f, node: en.Value, path: fpath})
		if en.Value.Kind == yaml.ScalarNode && !yamldoc.IsNull(en.Value) {
			labels = append(labels, sanitizeLabel(en.Value.Value))
		} else {
			scalars = false
		}
	}
	switch {
	case name != nil:
		if name.Kind != yaml.ScalarNode || !namePattern.MatchString(name.Value) {
			return axisValue{}, d.Errorf(name, path+".name", "want a label: %s", nameRule)
		}
		av.label = name.Value
	case scalars:
		av.label = strings.Join(labels, "-")
	default:
		return axisValue{}, d.Errorf(e, path, "give this value a label: {name: LABEL, set: {...}} (it sets a field that is not a single value)")
	}
	return av, nil
}

// setsFields reports whether an axis's values are written as
// {set: {...}}, the form of an axis that is not an instance field.
func setsFields(v *yaml.Node) bool {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return false
	}
	for _, e := range v.Content {
		if valueNode(e, "set") == nil {
			return false
		}
	}
	return true
}

// checkAxesDisjoint refuses two axes that set the same field (or the same
// server setting): which one wins would depend on their order.
func checkAxesDisjoint(d *yamldoc.Decoder, axes []axis) error {
	owner := map[string]string{}
	for _, a := range axes {
		mine := map[string]*yaml.Node{}
		for _, v := range a.values {
			for _, fv := range v.sets {
				keys := []string{fv.field}
				if fv.field == "settings" && fv.node.Kind == yaml.MappingNode {
					keys = nil
					for i := 0; i+1 < len(fv.node.Content); i += 2 {
						keys = append(keys, "settings."+fv.node.Content[i].Value)
					}
				}
				for _, k := range keys {
					if _, ok := mine[k]; !ok {
						mine[k] = fv.node
					}
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(mine)) {
			if o, ok := owner[k]; ok {
				return d.Errorf(mine[k], "matrix.axes."+a.name, "sets %s, which axis %s sets too: one axis per field (move them into one axis with set:)", k, o)
			}
			owner[k] = a.name
		}
	}
	return nil
}

// labelPaths shortens directory labels to their last element, or to the
// whole path when two values share it.
func labelPaths(d *yamldoc.Decoder, a *axis, path string) error {
	if a.name == "data_dir" || a.name == "wal_dir" {
		short := map[string]int{}
		for _, v := range a.values {
			short[sanitizeLabel(filepath.Base(v.node.Value))]++
		}
		for i, v := range a.values {
			if v.node.Kind != yaml.ScalarNode || v.label != sanitizeLabel(v.node.Value) {
				continue // named explicitly
			}
			if b := sanitizeLabel(filepath.Base(v.node.Value)); short[b] == 1 {
				a.values[i].label = b
			}
		}
	}
	seen := map[string]int{}
	for i, v := range a.values {
		if j, dup := seen[v.label]; dup {
			return d.Errorf(v.node, fmt.Sprintf("%s[%d]", path, i), "same label %q as value %d: name them ({name: LABEL, value: ...})", v.label, j)
		}
		seen[v.label] = i
	}
	return nil
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9._]+`)

// sanitizeLabel keeps letters, digits, '.' and '_' and turns every other
// run of characters into one '-'.
func sanitizeLabel(s string) string {
	return strings.Trim(notLabel.ReplaceAllString(s, "-"), "-._")
}
