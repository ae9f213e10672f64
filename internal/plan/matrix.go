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
//	  name: "{data_dir}-{io_limit}"
type matrixFile struct {
	// Name is the template of the targets' names: {AXIS} stands for the
	// label of that axis's value. Default: the labels joined by "-".
	Name     string       `yaml:"name"`
	Instance InstanceSpec `yaml:",inline"`
	Axes     yaml.Node    `yaml:"axes"`
	Prices   *cost.Prices `yaml:"prices"`
}

// notAxes are instance fields that cannot vary across a matrix.
var notAxes = map[string]bool{"name": true, "max_connections": true, "bin_dir": true}

type axisValue struct {
	label string
	node  *yaml.Node
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
	fields := yamldoc.Fields(reflect.TypeFor[InstanceSpec]())
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
		if _, ok := fields[k.Value]; !ok || notAxes[k.Value] {
			return nil, d.Errorf(k, path, "not an axis%s", yamldoc.Suggest(k.Value, allowed))
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
			av, err := axisEntry(d, e, fmt.Sprintf("%s[%d]", path, j))
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
		f := reflect.ValueOf(&spec).Elem().FieldByIndex(fields[a.name])
		if err := d.DecodeValue(v.node, f, fmt.Sprintf("matrix.axes.%s[%d]", a.name, idx[ai])); err != nil {
			return nil, err
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
	t := &TargetSpec{Name: name, Instance: spec, Prices: m.Prices, Line: n.Line, Axes: labels,
		Path: "matrix", node: n}
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
// {name: LABEL, value: VALUE} to give it a label of its own.
func axisEntry(d *yamldoc.Decoder, e *yaml.Node, path string) (axisValue, error) {
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
			return axisValue{label: name.Value, node: value}, nil
		}
	}
	switch {
	case yamldoc.IsNull(e) || (e.Kind == yaml.MappingNode && len(e.Content) == 0):
		return axisValue{label: "none", node: e}, nil
	case e.Kind == yaml.ScalarNode:
		return axisValue{label: sanitizeLabel(e.Value), node: e}, nil
	}
	return axisValue{}, d.Errorf(e, path, "give this value a label: {name: LABEL, value: ...}")
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
