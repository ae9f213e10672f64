package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/yamldoc"
)

// File is a plan as a value, for a command that generates one (oltplab
// parallel, neighbours): Encode writes it in the plan language, which
// Decode reads back, and which the experiment stores and resumes from.
type File struct {
	// Comment is written above the plan: lines starting with "#".
	Comment    string
	Name       string
	Warehouses int
	// Sections are the plan's sections named after step kinds, in order.
	Sections []Section
	Targets  []*TargetSpec
	// Steps are the kinds of the plan's steps in order; each takes its
	// kind's section.
	Steps []string
}

// Section is the plan's section of one step kind: the options every step
// of that kind takes, a value of the kind's options type.
type Section struct {
	Kind    string
	Options any
}

// Encode writes f as a plan file.
func (f *File) Encode() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, v any) error {
		n, err := yamldoc.Encode(v)
		if err != nil {
			return fmt.Errorf("plan %s: %s: %w", f.Name, key, err)
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, n)
		return nil
	}
	if err := add("name", f.Name); err != nil {
		return nil, err
	}
	if err := add("warehouses", f.Warehouses); err != nil {
		return nil, err
	}
	for _, s := range f.Sections {
		if err := add(s.Kind, s.Options); err != nil {
			return nil, err
		}
	}
	if err := add("targets", f.Targets); err != nil {
		return nil, err
	}
	if err := add("steps", f.Steps); err != nil {
		return nil, err
	}
	return yamldoc.Marshal(root, f.Comment)
}
