package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// Plan is a decoded plan file: the experiment's name, the scale, the
// targets (explicit ones first, then those of the matrix) and the steps
// in the order they run on each target.
type Plan struct {
	// File is the plan's path as given; Dir is the directory relative
	// paths in the plan (data_dir, sqlite: files, results) resolve against.
	File, Dir string
	// Source is the file's text; SHA256 its digest.
	Source []byte
	SHA256 string

	Name        string
	Description string
	// Question is what the experiment asks, in words, for the report's
	// first page ("" when the plan states none).
	Question string
	// Results is the results store the plan asks for ("" for the default),
	// already resolved against Dir.
	Results    string
	Warehouses int
	// Baseline is the name of the target every ratio is taken against
	// (the first target when the plan names none).
	Baseline string
	Targets  []*TargetSpec
	Steps    []*Entry
	// Cost is what the report's cost table is asked for beyond the
	// targets' prices (nil when the plan has no cost section).
	Cost *CostSpec
	// PriceList is the file the targets' instance types are priced from
	// ("" for none), resolved against Dir.
	PriceList string
	priceList *cost.PriceList
	// Hosts are the machines of the agents the plan places targets and
	// drivers on (hosts.go); Driver where the driver runs unless a step
	// says otherwise (Host "": here).
	Hosts  map[string]*HostSpec
	Driver DriverPlace
}

// Entry is one entry of the plan's steps list: a step of a kind with its
// options.
type Entry struct {
	Index int    // position in the list, from 0
	Path  string // steps[i], for errors
	Line  int
	Kind  *Kind
	Step  Step
}

// Scope is what one execution of the entry covers: its kind's, unless
// its options decide (Scoper).
func (e *Entry) Scope() Scope {
	if s, ok := e.Step.(Scoper); ok {
		return s.Scope()
	}
	return e.Kind.Scope
}

// planFile is the fixed part of a plan file; the sections named after a
// step kind (build:, profile:, ...) are decoded by their kinds.
type planFile struct {
	Name        string        `yaml:"name"`
	Description string        `yaml:"description"`
	Question    string        `yaml:"question"`
	Results     string        `yaml:"results"`
	Warehouses  int           `yaml:"warehouses"`
	Baseline    string        `yaml:"baseline"`
	Targets     []*TargetSpec `yaml:"targets"`
	Matrix      *yaml.Node    `yaml:"matrix"`
	Cost        *CostSpec     `yaml:"cost"`
	PriceList   string        `yaml:"price_list"`
	Steps       []yaml.Node   `yaml:"steps"`
	// Hosts and Driver place targets and drivers on agents' hosts.
	Hosts  map[string]*HostSpec `yaml:"hosts"`
	Driver *DriverPlace         `yaml:"driver"`
}

// maxQuestion bounds a plan's question: one sentence on a report's
// first page.
const maxQuestion = 300

// MaxTargets bounds a plan's targets, its matrix's included: each is a
// database measured one after the other (a managed instance started and
// built for each), so hundreds already make a study of weeks.
const MaxTargets = 256

// MaxSteps bounds a plan's steps: each runs on every target.
const MaxSteps = 100

// MaxPlanBytes bounds a plan file: a plan with every option of every
// step is a few kilobytes.
const MaxPlanBytes = 1 << 20

// namePattern is what a target or experiment name may be: it names
// directories and managed instances.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

const nameRule = "want 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit"

// Decode reads a plan. file names it in errors and is the base of its
// relative paths. Every mistake is a *yamldoc.Error naming the file, the
// line and the field; the checks that need the host (binaries,
// directories, CPUs, devices) are Validate's.
func Decode(file string, src []byte) (*Plan, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, &yamldoc.Error{File: file, Err: err}
	}
	if len(src) > MaxPlanBytes {
		return nil, &yamldoc.Error{File: file, Err: fmt.Errorf("%d bytes: a plan is at most %d", len(src), MaxPlanBytes)}
	}
	sum := sha256.Sum256(src)
	p := &Plan{File: file, Dir: filepath.Dir(abs), Source: src, SHA256: hex.EncodeToString(sum[:])}
	d := &yamldoc.Decoder{File: file}
	root, err := yamldoc.Parse(file, src)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.Errorf(root, "", "a plan is a mapping (name:, warehouses:, targets:, steps: ...), got %s", yamldoc.Describe(root))
	}
	// Split the sections of step kinds from the fixed fields.
	fixed := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: root.Line, Column: root.Column}
	sections := map[string]*yaml.Node{}
	sectionKeys := map[string]*yaml.Node{}
	entries, err := d.Entries(root, "")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if kind := LookupKind(e.Key.Value); kind != nil {
			sections[e.Key.Value], sectionKeys[e.Key.Value] = e.Value, e.Key
			continue
		}
		fixed.Content = append(fixed.Content, e.Key, e.Value)
	}
	// Counted before they are decoded.
	for _, l := range []struct {
		field string
		max   int
	}{{"targets", MaxTargets}, {"steps", MaxSteps}} {
		if n := valueNode(root, l.field); n != nil && n.Kind == yaml.SequenceNode && len(n.Content) > l.max {
			return nil, d.Errorf(n, l.field, "%d %s: at most %d", len(n.Content), l.field, l.max)
		}
	}
	var pf planFile
	if err := d.Decode(fixed, &pf, ""); err != nil {
		var ye *yamldoc.Error
		if errors.As(err, &ye) && errors.Is(ye.Err, yamldoc.ErrUnknownField) && !strings.ContainsAny(ye.Path, ".[") {
			// Top-level: the sections of step kinds are fields too.
			ye.Err = fmt.Errorf("%w%s", yamldoc.ErrUnknownField, yamldoc.Suggest(ye.Path, topLevelNames()))
		}
		return nil, err
	}
	p.Name, p.Description, p.Question, p.Warehouses, p.Baseline = pf.Name, pf.Description, strings.TrimSpace(pf.Question), pf.Warehouses, pf.Baseline
	if n := len(p.Question); n > maxQuestion {
		return nil, d.Errorf(valueNode(root, "question"), "question", "%d characters: a question is one sentence, at most %d", n, maxQuestion)
	}
	if p.Name == "" {
		return nil, d.Errorf(root, "name", "required: the experiment's name (%s)", nameRule)
	}
	if !namePattern.MatchString(p.Name) {
		return nil, d.Errorf(valueNode(root, "name"), "name", "%q: %s", p.Name, nameRule)
	}
	if p.Warehouses < 0 || (p.Warehouses == 0 && valueNode(root, "warehouses") != nil) {
		return nil, d.Errorf(valueNode(root, "warehouses"), "warehouses", "%d: at least 1", p.Warehouses)
	}
	if p.Warehouses > load.MaxWarehouses {
		return nil, d.Errorf(valueNode(root, "warehouses"), "warehouses", "%d: at most %d", p.Warehouses, load.MaxWarehouses)
	}
	if pf.Cost != nil {
		if err := pf.Cost.check(d, valueNode(root, "cost")); err != nil {
			return nil, err
		}
		p.Cost = pf.Cost
	}
	if pf.Results != "" {
		p.Results = pf.Results
		if !store.IsPostgresURL(pf.Results) { // a file, relative to the plan
			p.Results = p.Resolve(pf.Results)
		}
	}

	// Steps, each with its kind's options: the plan's section of that
	// kind first, the step's own options over it.
	stepsNode := valueNode(root, "steps")
	if len(pf.Steps) == 0 {
		return nil, d.Errorf(orRoot(stepsNode, root), "steps", "required: the list of steps to run on every target (e.g. [build, profile])")
	}
	used := map[string]bool{}
	for i := range pf.Steps {
		n := &pf.Steps[i]
		path := fmt.Sprintf("steps[%d]", i)
		name, opts, err := stepEntry(d, n, path)
		if err != nil {
			return nil, err
		}
		kind := LookupKind(name)
		if kind == nil {
			return nil, d.Errorf(n, path, "unknown step %q%s", name, yamldoc.Suggest(name, KindNames()))
		}
		used[name] = true
		step := kind.New()
		if sec := sections[name]; sec != nil {
			if err := d.Decode(sec, step, name); err != nil {
				return nil, err
			}
		}
		if opts != nil {
			if err := d.Decode(opts, step, path+"."+name); err != nil {
				return nil, err
			}
		}
		p.Steps = append(p.Steps, &Entry{Index: i, Path: path, Line: n.Line, Kind: kind, Step: step})
	}
	// Warehouses are the TPC-C schema's scale: required unless every
	// step works without it (the analytic workload's).
	if p.Warehouses == 0 {
		for _, e := range p.Steps {
			if !e.Kind.NoWarehouses {
				return nil, d.Errorf(orRoot(valueNode(root, "warehouses"), root), "warehouses",
					"required: the number of warehouses to build, at least 1 (step %s uses the TPC-C schema)", e.Kind.Name)
			}
		}
	}
	// A section no step uses (a step commented out) is still checked, so
	// that its mistakes do not wait for the day it is used.
	for name := range sectionKeys {
		if !used[name] {
			if err := d.Decode(sections[name], LookupKind(name).New(), name); err != nil {
				return nil, err
			}
		}
	}

	if pf.PriceList != "" {
		if err := p.readPriceList(d, pf.PriceList, valueNode(root, "price_list")); err != nil {
			return nil, err
		}
	}

	// Targets: the explicit ones, then the matrix's.
	for i, t := range pf.Targets {
		t.Path = fmt.Sprintf("targets[%d]", i)
		if err := t.finish(d, p); err != nil {
			return nil, err
		}
		p.Targets = append(p.Targets, t)
	}
	if pf.Matrix != nil && !yamldoc.IsNull(pf.Matrix) {
		ts, err := expandMatrix(d, p, pf.Matrix)
		if err != nil {
			return nil, err
		}
		p.Targets = append(p.Targets, ts...)
	}
	if len(p.Targets) == 0 {
		return nil, d.Errorf(root, "targets", "required: at least one target (targets: or matrix:)")
	}
	p.Hosts = pf.Hosts
	if pf.Driver != nil {
		p.Driver = *pf.Driver
	}
	if err := p.checkHosts(d, root); err != nil {
		return nil, err
	}
	if err := p.checkTargets(d); err != nil {
		return nil, err
	}
	if err := p.checkCost(d); err != nil {
		return nil, err
	}
	if p.Baseline == "" {
		p.Baseline = p.Targets[0].Name
	} else if p.Target(p.Baseline) == nil {
		return nil, d.Errorf(valueNode(root, "baseline"), "baseline", "no target named %q%s", p.Baseline, yamldoc.Suggest(p.Baseline, p.TargetNames()))
	}
	for _, s := range p.Steps {
		if err := s.Step.Prepare(p); err != nil {
			return nil, d.Errorf(&yaml.Node{Line: s.Line}, s.Path+"."+s.Kind.Name, "%v", err)
		}
	}
	// Managed instances accept connections for the largest step.
	conns := 0
	for _, s := range p.Steps {
		if c, ok := s.Step.(ConnectionUser); ok {
			conns = max(conns, c.Connections(p))
		}
	}
	for _, t := range p.Targets {
		t.sizeConnections(conns)
	}
	return p, nil
}

// stepEntry reads one entry of steps: a kind name, or a mapping of one
// kind name to that step's options.
func stepEntry(d *yamldoc.Decoder, n *yaml.Node, path string) (string, *yaml.Node, error) {
	switch {
	case n.Kind == yaml.ScalarNode && !yamldoc.IsNull(n):
		return n.Value, nil, nil
	case n.Kind == yaml.MappingNode && len(n.Content) == 2:
		return n.Content[0].Value, n.Content[1], nil
	}
	return "", nil, d.Errorf(n, path, "want a step name (build, profile, ...) or one step name with its options, got %s", yamldoc.Describe(n))
}

func topLevelNames() []string {
	names := slices.Sorted(maps.Keys(yamldoc.Fields(reflect.TypeFor[planFile]())))
	return slices.Concat(names, KindNames())
}

// Resolve makes a path in the plan absolute against the plan's directory.
func (p *Plan) Resolve(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(p.Dir, path)
}

// Target returns the target of that name, nil when there is none.
func (p *Plan) Target(name string) *TargetSpec {
	for _, t := range p.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TargetNames lists the targets' names in plan order.
func (p *Plan) TargetNames() []string {
	out := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		out[i] = t.Name
	}
	return out
}

// checkTargets refuses duplicate names and two targets on one database.
func (p *Plan) checkTargets(d *yamldoc.Decoder) error {
	names := map[string]*TargetSpec{}
	places := map[string]*TargetSpec{}
	ports := map[int]*TargetSpec{}
	for _, t := range p.Targets {
		if o := names[t.Name]; o != nil {
			return d.Errorf(&yaml.Node{Line: t.Line}, t.Path, "target name %q is also used by %s", t.Name, o.Path)
		}
		names[t.Name] = t
		place := t.place()
		if o := places[place]; o != nil && place != "" {
			return d.Errorf(&yaml.Node{Line: t.Line}, t.Path,
				"target %s uses the same database as %s (%s): each target needs its own", t.Name, o.Name, place)
		}
		places[place] = t
		// Steps over all targets run them at once: one port each.
		if port := t.Instance.Port; t.Managed() && port != 0 {
			if o := ports[port]; o != nil {
				return d.Errorf(&yaml.Node{Line: t.Line}, t.Path+".port",
					"target %s asks for port %d, as %s does: each target needs its own (or none, for a free one)", t.Name, port, o.Name)
			}
			ports[port] = t
		}
	}
	return nil
}

// valueNode returns the value of key in mapping n, nil when absent.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func orRoot(n, root *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return root
}

// readPriceList reads the plan's price list (cost.ParsePriceList).
func (p *Plan) readPriceList(d *yamldoc.Decoder, file string, n *yaml.Node) error {
	path := p.Resolve(file)
	// A FIFO or a device would block or never end: a list is a file.
	if st, err := os.Stat(path); err != nil {
		return d.Errorf(n, "price_list", "%v", err)
	} else if !st.Mode().IsRegular() {
		return d.Errorf(n, "price_list", "%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return d.Errorf(n, "price_list", "%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, cost.MaxPriceListBytes+1))
	if err != nil {
		return d.Errorf(n, "price_list", "read %s: %v", path, err)
	}
	l, err := cost.ParsePriceList(file, data)
	if err != nil {
		return d.Errorf(n, "price_list", "%v", err)
	}
	p.PriceList, p.priceList = path, &l
	return nil
}
