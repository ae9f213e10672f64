package instance

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUSet is a set of logical CPU numbers, written as a Linux CPU list:
// "0", "0-3", "0,2,4-7".
type CPUSet []int

// ParseCPUList parses a Linux CPU list into a sorted set without duplicates.
func ParseCPUList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number or range (want e.g. 0, 0-3, 0,2)", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: %q is not a CPU range (want e.g. 0-3)", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("CPU list %q: range %q is too large", s, part)
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make(CPUSet, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// String writes the set as a Linux CPU list with ranges.
func (c CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Without returns the CPUs of c that are not in other.
func (c CPUSet) Without(other CPUSet) CPUSet {
	in := map[int]bool{}
	for _, x := range other {
		in[x] = true
	}
	var out CPUSet
	for _, x := range c {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

// Host is what validation needs to know about the machine.
type Host struct {
	// CPUs are the CPUs oltplab may run on: online, and in its own
	// affinity mask (a container or taskset may narrow it).
	CPUs CPUSet
}

// LiveHost describes the running host.
func LiveHost() (Host, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return Host{}, fmt.Errorf("read online CPUs: %w", err)
	}
	online, err := ParseCPUList(string(b))
	if err != nil {
		return Host{}, fmt.Errorf("read online CPUs: %w", err)
	}
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		return Host{CPUs: online}, nil
	}
	var allowed CPUSet
	for _, c := range online {
		if mask.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	return Host{CPUs: allowed}, nil
}
