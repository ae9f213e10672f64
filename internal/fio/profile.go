package fio

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Profile is one named storage workload: a fio job described by the few
// options the studies vary. Everything else comes from baseOptions.
type Profile struct {
	Name string
	// Emulates says, in a few words, which database I/O it stands for.
	Emulates string
	// RW is fio's rw: randrw, randread, randwrite, read or write.
	RW string
	// BlockSizeBytes is fio's bs.
	BlockSizeBytes int64
	// ReadPct is fio's rwmixread for the mixed patterns (randrw, rw);
	// ignored for the others.
	ReadPct int
	// IODepth is the queue depth of each job (fio's iodepth).
	IODepth int
	// Jobs is the number of parallel jobs (fio's numjobs), each with its
	// own queue of IODepth; they share the test file.
	Jobs int
	// Runtime is how long it is measured (fio's runtime, time based).
	Runtime time.Duration
}

// defaultRuntime is each profile's measured time unless overridden; the
// diskspd profile of the SQL Server studies runs 30 s (-d30).
const defaultRuntime = 30 * time.Second

// Profiles are the named profiles, in the order `all` runs them. They are
// the storage micro-benchmarks of the studies (METHODOLOGY.md experiment 9).
var Profiles = []Profile{
	{Name: "oltp-4k-qd8", Emulates: "OLTP data-page I/O, moderate load",
		RW: "randrw", BlockSizeBytes: 4 << 10, ReadPct: 70, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
	{Name: "oltp-4k-qd32", Emulates: "OLTP data-page I/O, heavy load",
		RW: "randrw", BlockSizeBytes: 4 << 10, ReadPct: 70, IODepth: 32, Jobs: 1, Runtime: defaultRuntime},
	// diskspd -b8K -r -w25 -o4 -t8 -d30 -L: 8 threads with 4 outstanding
	// I/Os each on one file.
	{Name: "sql-8k", Emulates: "SQL Server studies' diskspd -b8K -r -w25 -o4 -t8 -d30 -L",
		RW: "randrw", BlockSizeBytes: 8 << 10, ReadPct: 75, IODepth: 4, Jobs: 8, Runtime: defaultRuntime},
	{Name: "rand-64k", Emulates: "extent-sized random I/O (read-ahead, checkpoints)",
		RW: "randrw", BlockSizeBytes: 64 << 10, ReadPct: 70, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
	{Name: "seq-read-128k", Emulates: "table scans, backup reads",
		RW: "read", BlockSizeBytes: 128 << 10, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
	{Name: "seq-write-128k", Emulates: "log writes, bulk loads, restores",
		RW: "write", BlockSizeBytes: 128 << 10, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
	{Name: "seq-read-256k", Emulates: "large scans, backup reads",
		RW: "read", BlockSizeBytes: 256 << 10, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
	{Name: "seq-write-256k", Emulates: "large sequential writes, restores",
		RW: "write", BlockSizeBytes: 256 << 10, IODepth: 8, Jobs: 1, Runtime: defaultRuntime},
}

// baseOptions apply to every profile before its own. Jobs run as threads
// of one fio process (thread), so stopping that process stops them all;
// group_reporting makes fio report the jobs of a profile as one.
var baseOptions = []Option{
	{"ioengine", "libaio"},
	{"direct", "1"},
	{"time_based", "1"},
	{"group_reporting", "1"},
	{"thread", "1"},
}

// ProfileNames lists the names of Profiles, in order.
func ProfileNames() []string {
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = p.Name
	}
	return names
}

// LookupProfiles resolves a comma-separated list of profile names, or
// "all". Unknown names are an InputError that lists the known ones.
func LookupProfiles(list string) ([]Profile, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return append([]Profile(nil), Profiles...), nil
	}
	var out []Profile
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		p, ok := profileByName(name)
		if !ok {
			return nil, inputErrorf("unknown profile %q (want all or one or more of %s)", name, strings.Join(ProfileNames(), ", "))
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, p)
		}
	}
	return out, nil
}

func profileByName(name string) (Profile, bool) {
	for _, p := range Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// mixed reports whether the profile both reads and writes.
func (p Profile) mixed() bool { return p.RW == "randrw" || p.RW == "rw" || p.RW == "readwrite" }

// Options are the profile's fio options: baseOptions, then its own.
// The runtime is given in whole seconds.
func (p Profile) Options() []Option {
	opts := append([]Option(nil), baseOptions...)
	opts = append(opts, Option{"rw", p.RW}, Option{"bs", strconv.FormatInt(p.BlockSizeBytes, 10)})
	if p.mixed() {
		opts = append(opts, Option{"rwmixread", strconv.Itoa(p.ReadPct)})
	}
	opts = append(opts,
		Option{"iodepth", strconv.Itoa(p.IODepth)},
		Option{"numjobs", strconv.Itoa(p.Jobs)},
		Option{"runtime", strconv.FormatInt(int64(p.Runtime/time.Second), 10)},
	)
	return opts
}

// Describe is the profile in one line: what it emulates, block size, mix,
// queue depth, jobs and runtime.
func (p Profile) Describe() string {
	var pattern string
	switch p.RW {
	case "randrw":
		pattern = fmt.Sprintf("random %d%% read / %d%% write", p.ReadPct, 100-p.ReadPct)
	case "randread":
		pattern = "random read"
	case "randwrite":
		pattern = "random write"
	case "read":
		pattern = "sequential read"
	case "write":
		pattern = "sequential write"
	default:
		pattern = p.RW
	}
	jobs := "1 job"
	if p.Jobs != 1 {
		jobs = fmt.Sprintf("%d jobs (%d outstanding)", p.Jobs, p.Jobs*p.IODepth)
	}
	return fmt.Sprintf("%s %s, queue depth %d, %s, %s: %s",
		FormatBytes(p.BlockSizeBytes), pattern, p.IODepth, jobs, p.Runtime, p.Emulates)
}
