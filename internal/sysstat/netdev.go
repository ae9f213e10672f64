package sysstat

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// NetDev is one interface's cumulative counters from /proc/net/dev.
type NetDev struct {
	Name      string
	RxBytes   uint64
	RxPackets uint64
	TxBytes   uint64
	TxPackets uint64
}

// ParseNetDev parses /proc/net/dev (two header lines, then one line per
// interface: 8 receive columns, 8 transmit columns).
func ParseNetDev(r io.Reader) ([]NetDev, error) {
	var out []NetDev
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.Contains(name, "|") {
			continue // header
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return out, fmt.Errorf("net/dev %s: %d columns, want 16", strings.TrimSpace(name), len(f))
		}
		n := NetDev{Name: strings.TrimSpace(name)}
		var skip uint64
		if err := parseUints(f[:10], &n.RxBytes, &n.RxPackets, &skip, &skip, &skip, &skip, &skip, &skip,
			&n.TxBytes, &n.TxPackets); err != nil {
			return out, fmt.Errorf("net/dev %s: %w", n.Name, err)
		}
		out = append(out, n)
	}
	return out, sc.Err()
}
