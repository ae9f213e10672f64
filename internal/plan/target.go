package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/cost"
	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// TargetSpec is one target of a plan: an external database (url) or a
// managed instance oltplab starts itself (engine, data_dir and the
// instance's other fields), with optional prices for the cost model.
type TargetSpec struct {
	Name string `yaml:"name"`
	// URL names an external database: postgres://, mysql:// or sqlite:PATH.
	URL string `yaml:"url,omitempty"`
	// PasswordFile holds the password of URL on its first line.
	PasswordFile string `yaml:"password_file,omitempty"`
	// Instance describes a managed instance (when URL is empty).
	Instance InstanceSpec `yaml:",inline"`
	// Host is the plan's host (an agent's machine) the managed instance
	// runs on; "" (or "here") is this machine.
	Host string `yaml:"host,omitempty"`
	// Agent is the plan's host Host names (nil here), set by Decode.
	Agent *HostSpec `yaml:"-"`
	// Prices is what the target costs, for the cost model (optional).
	Prices *cost.Prices `yaml:"prices,omitempty"`
	// InstanceType names the cloud instance the target stands for, in
	// the plan's price list: its hourly price and vCPUs fill Prices.
	InstanceType string `yaml:"instance_type,omitempty"`

	// Path and Line place the target in the plan, for errors.
	Path string `yaml:"-"`
	Line int    `yaml:"-"`
	// Axes are the matrix values that made this target (axis -> label);
	// nil for a target written out.
	Axes map[string]string `yaml:"-"`
	// parsed is URL parsed (zero for a managed instance).
	parsed dialect.Target
	// node is the mapping the target was written in (the matrix's for a
	// matrix target), to place errors in its prices.
	node *yaml.Node
}

// InstanceSpec is the part of a target that describes a managed instance,
// with the plan's field names.
type InstanceSpec = instance.Spec

// DecodeNode decodes a target, remembering its line.
func (t *TargetSpec) DecodeNode(d *yamldoc.Decoder, n *yaml.Node, path string) error {
	type plain TargetSpec // without this method
	t.Line, t.node = n.Line, n
	return d.Decode(n, (*plain)(t), path)
}

// Managed reports whether oltplab starts this target itself.
func (t *TargetSpec) Managed() bool { return t.URL == "" }

// Parsed is the target's URL parsed, its password included (zero for a
// managed instance, whose target is known once it runs).
func (t *TargetSpec) Parsed() dialect.Target { return t.parsed }

// Secret is the password given for the target's URL ("" when none).
func (t *TargetSpec) Secret() string { return t.parsed.Password.Reveal() }

// Display is the target as results show it: its redacted URL, or its
// engine and data directory.
func (t *TargetSpec) Display() string {
	if t.Managed() && t.Host != "" {
		return fmt.Sprintf("%s on %s (managed, on host %s)", t.Instance.Engine, t.Instance.DataDir, t.Host)
	}
	if t.Managed() {
		return fmt.Sprintf("%s on %s (managed)", t.Instance.Engine, t.Instance.DataDir)
	}
	return t.parsed.String()
}

// checkPrices validates the target's prices, placing an error at its
// field's line.
func (t *TargetSpec) checkPrices(d *yamldoc.Decoder) error {
	if t.Prices == nil {
		return nil
	}
	err := cost.Locate(t.Prices.Validate(), t.node)
	var ce *cost.Error
	if errors.As(err, &ce) {
		return d.Errorf(&yaml.Node{Line: ce.Line}, t.Path+"."+ce.Field(), "%s", ce.Msg)
	}
	if err != nil {
		return d.Wrap(&yaml.Node{Line: t.Line}, t.Path+".prices", err)
	}
	return nil
}

// priceInstance prices the target's cloud instance from the plan's price
// list: its instance_type (or prices.cloud.instance_type) gives the hourly
// price, the currency and the cores (cost.PriceList.Apply). The prices
// are the target's own copy: a matrix's are shared.
func (t *TargetSpec) priceInstance(d *yamldoc.Decoder, p *Plan) error {
	named := t.InstanceType
	if named == "" && t.Prices != nil && t.Prices.Cloud != nil {
		named = t.Prices.Cloud.InstanceType
	}
	if named == "" {
		return nil
	}
	at := &yaml.Node{Line: t.Line}
	if t.Prices == nil {
		return d.Errorf(at, t.Path+".prices", "required with instance_type %s: at least the period (prices: {years: 1}); the price per hour, currency and cores come from the price list", named)
	}
	pr := *t.Prices
	cl := cost.Cloud{}
	if pr.Cloud != nil {
		cl = *pr.Cloud
	}
	if t.InstanceType != "" && cl.InstanceType != "" && cl.InstanceType != t.InstanceType {
		return d.Errorf(at, t.Path+".instance_type", "%s, but prices.cloud.instance_type says %s: give one", t.InstanceType, cl.InstanceType)
	}
	cl.InstanceType = named
	pr.Cloud = &cl
	if p.priceList == nil {
		return d.Errorf(at, t.Path+".instance_type", "%s is priced from a price list: name one with price_list: FILE (a CSV of instance_type, vcpus, memory_gib, price_per_hour, currency)", named)
	}
	if err := p.priceList.Apply(&pr); err != nil {
		var ce *cost.Error
		if errors.As(err, &ce) {
			return d.Errorf(at, t.Path+".prices."+ce.Field(), "%s", ce.Msg)
		}
		return d.Wrap(at, t.Path+".prices", err)
	}
	if c := t.cores(); c > 0 && c != pr.Cores {
		return d.Errorf(at, t.Path+".cpus", "%s gives the server %d CPU(s), but instance type %s has %d vCPUs: the cost per core would price what was not measured",
			t.Instance.CPUs, c, named, pr.Cores)
	}
	t.Prices = &pr
	return nil
}

// finish checks a written-out target and resolves its paths.
func (t *TargetSpec) finish(d *yamldoc.Decoder, p *Plan) error {
	at := &yaml.Node{Line: t.Line}
	if err := t.priceInstance(d, p); err != nil {
		return err
	}
	if err := t.checkPrices(d); err != nil {
		return err
	}
	if t.Name == "" {
		return d.Errorf(at, t.Path+".name", "required: the target's name (%s)", nameRule)
	}
	if !namePattern.MatchString(t.Name) {
		return d.Errorf(at, t.Path+".name", "%q: %s", t.Name, nameRule)
	}
	if t.URL != "" && t.Host != "" && t.Host != Here {
		return t.checkRemote(d)
	}
	if t.URL != "" {
		if set := setFields(t.Instance); len(set) > 0 {
			return d.Errorf(at, t.Path, "url names an external database; %s describe a managed instance: give one or the other", strings.Join(set, ", "))
		}
		raw := t.URL
		if rest, ok := strings.CutPrefix(raw, "sqlite:"); ok {
			raw = "sqlite:" + p.Resolve(rest)
		}
		tg, err := dialect.ParseTarget(raw, p.Resolve(t.PasswordFile))
		if err != nil {
			return d.Errorf(at, t.Path+".url", "%v", err)
		}
		if !slices.Contains(dialect.Schemes(), tg.Scheme) {
			return d.Errorf(at, t.Path+".url", "%v %q (known: %s)", dialect.ErrUnknownScheme, tg.Scheme, strings.Join(dialect.Schemes(), ", "))
		}
		t.parsed = tg
		return nil
	}
	if t.PasswordFile != "" {
		return d.Errorf(at, t.Path+".password_file", "only for a url target (a managed instance makes its own password)")
	}
	if t.Instance.Engine == "" {
		return d.Errorf(at, t.Path, "want url (an external database) or engine and data_dir (a managed instance)")
	}
	t.Instance.Name = t.Name
	if t.Host != "" && t.Host != Here {
		if err := t.checkRemote(d); err != nil {
			return err
		}
	}
	t.Instance.DataDir = p.Resolve(t.Instance.DataDir)
	t.Instance.WALDir = p.Resolve(t.Instance.WALDir)
	return nil
}

// place identifies the database a target uses, so that two targets do
// not share one.
func (t *TargetSpec) place() string {
	if !t.Managed() {
		return t.parsed.String()
	}
	if t.Host != "" {
		return t.Host + ":" + string(t.Instance.Engine) + ":" + t.Instance.DataDir
	}
	return string(t.Instance.Engine) + ":" + t.Instance.DataDir
}

// sizeConnections makes a managed instance accept n client connections
// unless the plan asks for more. An embedded engine has no connections to
// size.
func (t *TargetSpec) sizeConnections(n int) {
	if t.Managed() && !t.Instance.Engine.Embedded() && t.Instance.MaxConnections < n {
		t.Instance.MaxConnections = n
	}
}

// setFields names the yaml fields of v (a struct) that are not zero.
func setFields(v any) []string {
	rv := reflect.ValueOf(v)
	var out []string
	for name, idx := range yamldoc.Fields(rv.Type()) {
		if !rv.FieldByIndex(idx).IsZero() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// engineDialects maps a managed engine to the dialect that talks to it.
var engineDialects = map[string]string{"postgres": "postgres", "mariadb": "mysql", "sqlite": "sqlite"}

// Dialect is the dialect the target is measured through ("postgres",
// "mysql", "sqlite").
func (t *TargetSpec) Dialect() string {
	if t.Managed() {
		return engineDialects[string(t.Instance.Engine)]
	}
	return t.parsed.Scheme
}

// LocalDir is the directory the target's data lives in when oltplab can
// know it before starting: a managed instance's data_dir or a SQLite
// file's directory; "" for a server.
func (t *TargetSpec) LocalDir() string {
	if t.Managed() {
		return t.Instance.DataDir
	}
	if f := t.SQLiteFile(); f != "" {
		if abs, err := filepath.Abs(f); err == nil {
			return filepath.Dir(abs)
		}
	}
	return ""
}
