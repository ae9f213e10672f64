package scenario

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Placement says where the database runs relative to the machine oltplab
// runs on, which is the only host its samplers measure. When the database
// is elsewhere, the host figures of a result are the load generator's,
// and the database host was not measured.
type Placement struct {
	// Local: the database runs on this machine (embedded SQLite, a Unix
	// socket, a loopback address or an address of this machine).
	Local bool `json:"local"`
	// Address is the host named by the target; empty for SQLite and
	// sockets.
	Address string `json:"address,omitempty"`
	// Why says how Local was decided, for a reader of the result.
	Why string `json:"why"`
	// Agent is the address of the `oltplab agent` that measures the
	// database's host, when one was given.
	Agent string `json:"agent,omitempty"`
	// Hosts, in a plan that spans machines, says where the database and
	// the driver ran and the round trip between them.
	Hosts *Hosts `json:"hosts,omitempty"`
}

// Hosts is where a plan placed a run: the database's host and the
// driver's (a plan's host names; "here" is the machine oltplab ran on),
// their agents, and the round trip from the driver's host to the
// database's, measured at the start of the run.
type Hosts struct {
	Database      string `json:"database"`
	DatabaseAgent string `json:"database_agent,omitempty"`
	Driver        string `json:"driver"`
	DriverAgent   string `json:"driver_agent,omitempty"`
	// RTTMicros is the median round trip between the driver's host and
	// the database's agent (HTTPS pings over one connection); 0 when
	// both are this machine or it could not be measured (RTTNote).
	RTTMicros int64  `json:"rtt_micros,omitempty"`
	RTTNote   string `json:"rtt_note,omitempty"`
}

// String is the placement in words.
func (h *Hosts) String() string {
	on := func(host string) string {
		if host == "here" {
			return " here"
		}
		return " on " + host
	}
	s := "database" + on(h.Database)
	if h.DatabaseAgent != "" {
		s += " (agent " + h.DatabaseAgent + ")"
	}
	s += ", driver" + on(h.Driver)
	if h.DriverAgent != "" {
		s += " (agent " + h.DriverAgent + ")"
	}
	if h.RTTMicros > 0 {
		s += fmt.Sprintf(", round trip %.3f ms", float64(h.RTTMicros)/1000)
	}
	if h.RTTNote != "" {
		s += " (" + h.RTTNote + ")"
	}
	return s
}

// HostRole is what the host figures measured with this placement
// describe, in words a result shows next to them.
func (p Placement) HostRole() string {
	if p.Hosts != nil && p.Hosts.Driver != "here" && p.Hosts.Database != "here" {
		return "the plan's runner only: " + p.Hosts.String() + "; this machine ran neither"
	}
	if p.Hosts != nil && p.Hosts.Driver != "here" {
		return "database host (the database runs on this machine; " + p.Hosts.String() + ")"
	}
	if p.Hosts != nil && p.Hosts.Database != "here" {
		return "load generator only: " + p.Hosts.String()
	}
	if p.Local {
		return "database host (the database runs on this machine)"
	}
	return "load generator only: the database at " + p.Address + " runs on another machine, whose host was not measured"
}

// resolveTimeout bounds the look-up of a target's host name.
const resolveTimeout = 3 * time.Second

// Place decides where tg's database runs. A target without a URL (a
// monitor of this host alone) is local. isLocal, when not nil, replaces the
// test of an address against this machine's own addresses (tests use it).
func Place(ctx context.Context, tg dialect.Target, isLocal func(net.IP) bool) Placement {
	if isLocal == nil {
		isLocal = localAddress
	}
	u := tg.URL
	switch {
	case u == nil:
		return Placement{Local: true, Why: "no database target: the host itself is measured"}
	case tg.Scheme == "sqlite":
		return Placement{Local: true, Why: "embedded SQLite runs inside oltplab"}
	case u.Query().Get("socket") != "" || strings.HasPrefix(u.Query().Get("host"), "/"):
		return Placement{Local: true, Why: "the target is a Unix socket"}
	}
	host := u.Hostname()
	if host == "" || strings.HasPrefix(host, "/") {
		return Placement{Local: true, Why: "the target is a Unix socket or the default local server"}
	}
	p := Placement{Address: host}
	if ip := net.ParseIP(host); ip != nil {
		p.Local = isLocal(ip)
		p.Why = "address " + host + describeLocal(p.Local)
		return p
	}
	if strings.EqualFold(host, "localhost") {
		return Placement{Local: true, Address: host, Why: "localhost"}
	}
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(rctx, host)
	if err != nil || len(addrs) == 0 {
		p.Why = "host name " + host + " could not be resolved here, so it is not known to be this machine"
		return p
	}
	p.Local = true
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !isLocal(ip) {
			p.Local = false
			break
		}
	}
	p.Why = "host name " + host + " resolves to " + strings.Join(addrs, ", ") + describeLocal(p.Local)
	return p
}

func describeLocal(local bool) string {
	if local {
		return ", an address of this machine"
	}
	return ", not an address of this machine"
}

// localAddress reports whether ip is a loopback address or one of this
// machine's interface addresses.
func localAddress(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
