package plan

import (
	"net"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/oltplab/oltplab/internal/instance"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// HostSpec is one of the plan's hosts: the machine of an `oltplab agent`
// that starts the managed instances placed on it and runs the driver
// placed there.
//
//	hosts:
//	  db1: {agent: 10.0.0.5:7300, fingerprint: "sha256:...", token_file: db1.token}
type HostSpec struct {
	// Agent is the agent's HOST:PORT.
	Agent string `yaml:"agent"`
	// Fingerprint is the SHA-256 fingerprint of the agent's certificate,
	// as the agent prints it when it starts: required off loopback.
	Fingerprint string `yaml:"fingerprint,omitempty"`
	// TokenFile holds the agent's token on its first line (relative to
	// the plan); read when the plan runs.
	TokenFile string `yaml:"token_file"`

	Name string `yaml:"-"`
	Line int    `yaml:"-"`
}

// Here is the host name of the machine oltplab runs on: a plan's
// default for the driver and for every target.
const Here = "here"

// DriverPlace is where a plan's or a step's driver runs.
type DriverPlace struct {
	// Host is one of the plan's hosts, or "here" (the default).
	Host string `yaml:"host"`
}

// DriverPlacer is a step kind whose options can place the driver (the
// profile step's driver: {host: lg1}).
type DriverPlacer interface {
	DriverHost() string
}

// checkHosts checks the plan's hosts, and the hosts its targets and its
// driver name.
func (p *Plan) checkHosts(d *yamldoc.Decoder, root *yaml.Node) error {
	hn := valueNode(root, "hosts")
	names := make([]string, 0, len(p.Hosts))
	for name, h := range p.Hosts {
		names = append(names, name)
		at := orRoot(valueNode(hn, name), root)
		path := "hosts." + name
		if name == Here || !namePattern.MatchString(name) {
			return d.Errorf(at, path, "host name %q: %s, not %q (this machine)", name, nameRule, Here)
		}
		if h == nil {
			return d.Errorf(at, path, "want agent: HOST:PORT and token_file")
		}
		h.Name, h.Line = name, at.Line
		host, _, err := net.SplitHostPort(h.Agent)
		if err != nil || h.Agent == "" {
			return d.Errorf(at, path+".agent", "%q: want the agent's HOST:PORT (oltplab agent --listen on that host)", h.Agent)
		}
		if h.TokenFile == "" {
			return d.Errorf(at, path+".token_file", "required: the file holding the agent's token (an agent that acts needs one)")
		}
		h.TokenFile = p.Resolve(h.TokenFile)
		ip := net.ParseIP(host)
		if h.Fingerprint == "" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return d.Errorf(at, path+".fingerprint", "required for an agent off loopback: the fingerprint the agent prints when it starts (sha256:...)")
		}
	}
	sort.Strings(names)
	for _, t := range p.Targets {
		if t.Host == "" || t.Host == Here {
			t.Host = ""
			continue
		}
		if p.Hosts[t.Host] == nil {
			return d.Errorf(&yaml.Node{Line: t.Line}, t.Path+".host", "no host named %q in hosts%s", t.Host, yamldoc.Suggest(t.Host, names))
		}
		t.Agent = p.Hosts[t.Host]
	}
	if p.Driver.Host != "" && p.Driver.Host != Here && p.Hosts[p.Driver.Host] == nil {
		return d.Errorf(orRoot(valueNode(root, "driver"), root), "driver.host", "no host named %q in hosts%s", p.Driver.Host, yamldoc.Suggest(p.Driver.Host, append(names, Here)))
	}
	for _, e := range p.Steps {
		dp, ok := e.Step.(DriverPlacer)
		if !ok {
			continue
		}
		if h := dp.DriverHost(); h != "" && h != Here && p.Hosts[h] == nil {
			return d.Errorf(&yaml.Node{Line: e.Line}, e.Path+".driver.host", "no host named %q in hosts%s", h, yamldoc.Suggest(h, append(names, Here)))
		}
	}
	return nil
}

// checkRemote checks a target placed on another host: a managed server
// (an agent starts no embedded engine, a URL target is reached at its
// URL), its directories absolute paths on that host.
func (t *TargetSpec) checkRemote(d *yamldoc.Decoder) error {
	at := &yaml.Node{Line: t.Line}
	if t.URL != "" {
		return d.Errorf(at, t.Path+".host", "host places a managed instance on an agent's host; a url target is reached at its url (give driver: {host: ...} to drive it from another host)")
	}
	if t.Instance.Engine.Embedded() {
		return d.Errorf(at, t.Path+".host", "engine %s is embedded in the process that uses it: an agent starts servers only (%s)", t.Instance.Engine,
			strings.Join(serverEngines(), ", "))
	}
	for _, f := range []struct{ field, dir string }{{"data_dir", t.Instance.DataDir}, {"wal_dir", t.Instance.WALDir}} {
		if f.dir != "" && !filepath.IsAbs(f.dir) {
			return d.Errorf(at, t.Path+"."+f.field, "%q: want an absolute path on host %s (below one of its agent's --allow-dir roots)", f.dir, t.Host)
		}
	}
	return nil
}

func serverEngines() []string {
	var out []string
	for _, e := range instance.Engines() {
		if !e.Embedded() {
			out = append(out, string(e))
		}
	}
	return slices.Compact(out)
}

// DriverHost is where the driver of step e runs: the step's placement,
// else the plan's; "" is here.
func (p *Plan) DriverHost(e *Entry) string {
	h := p.Driver.Host
	if dp, ok := e.Step.(DriverPlacer); ok && dp.DriverHost() != "" {
		h = dp.DriverHost()
	}
	if h == Here {
		return ""
	}
	return h
}

// Remote reports whether any target or driver runs on another host.
func (p *Plan) Remote() bool {
	if p.Driver.Host != "" && p.Driver.Host != Here {
		return true
	}
	for _, t := range p.Targets {
		if t.Host != "" {
			return true
		}
	}
	for _, e := range p.Steps {
		if p.DriverHost(e) != "" {
			return true
		}
	}
	return false
}
