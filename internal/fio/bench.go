package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// ErrNotInstalled is returned when the fio program cannot be found.
var ErrNotInstalled = errors.New("fio is not installed (Debian package fio)")

// testFilePattern names the test files (os.CreateTemp, filepath.Glob).
const testFilePattern = "oltplab-fio-*.dat"

// MinRuntime is the shortest runtime a profile may be given; fio counts
// runtime in whole seconds.
const MinRuntime = time.Second

// Options configure one storage benchmark.
type Options struct {
	// Dir is the directory under test; the test file is created in it.
	Dir string
	// Profiles run in this order (see LookupProfiles).
	Profiles []Profile
	// Runtime, when not zero, replaces each profile's own runtime; whole
	// seconds, at least MinRuntime.
	Runtime time.Duration
	// SizeBytes is the test file's size; 0 chooses DefaultSize.
	SizeBytes int64
	// Extra options apply to every profile, after its own.
	Extra []Option
	// Path lists the directories searched for the fio program; nil
	// searches $PATH.
	Path []string
	// Logger receives diagnostics; nil is slog.Default().
	Logger *slog.Logger
	// Runner, when set, runs each fio process to completion instead of
	// cmd.Run: to run fio inside a managed instance's cgroups, so that
	// its I/O caps hold for fio too. It must keep cmd's SysProcAttr.
	Runner func(cmd *exec.Cmd) error
	// Tracker, when set, records the test file before it is created and
	// once Close removed it, so that the file of a killed oltplab is
	// found and removed later.
	Tracker Tracker
}

// Tracker records what a Bench creates before it exists, and its
// removal (the results store, through internal/scenario).
type Tracker interface {
	Track(ctx context.Context, path string, m claim.Mark) error
	Removed(ctx context.Context, path string, m claim.Mark)
}

// Validate checks the options that need no file system.
func (o Options) Validate() error {
	if o.Dir == "" {
		return inputErrorf("no directory to measure")
	}
	if len(o.Profiles) == 0 {
		return inputErrorf("no profile to run (want all or one or more of %v)", ProfileNames())
	}
	if o.Runtime != 0 && (o.Runtime < MinRuntime || o.Runtime%time.Second != 0) {
		return inputErrorf("runtime %s: want whole seconds, at least %s", o.Runtime, MinRuntime)
	}
	if o.SizeBytes != 0 && o.SizeBytes < 1<<20 {
		return inputErrorf("size %s is too small: want at least 1 MiB", FormatBytes(o.SizeBytes))
	}
	for _, x := range o.Extra {
		if _, err := ParseOption(x.String()); err != nil {
			return err
		}
	}
	return nil
}

// Plan is what a prepared Bench will do, known before any I/O is measured.
type Plan struct {
	Fio        string `json:"fio"`         // the program's path
	FioVersion string `json:"fio_version"` // `fio --version`, e.g. "fio-3.33"
	Dir        string `json:"dir"`
	File       string `json:"file"` // the test file, removed by Close
	// FileSizeBytes is the test file's size; SizeFrom says how it was chosen.
	FileSizeBytes int64  `json:"file_size_bytes"`
	SizeFrom      string `json:"size_from"`
	// DirectIO is whether the profiles run with direct I/O (O_DIRECT,
	// bypassing the page cache). MemoryBacked marks a file system that
	// keeps files in memory (tmpfs, ramfs): there is no device to measure.
	DirectIO     bool             `json:"direct_io"`
	MemoryBacked bool             `json:"memory_backed"`
	Device       *sysstat.Device  `json:"device,omitempty"` // the storage under Dir; nil when unknown
	Profiles     []PlannedProfile `json:"profiles"`
	Extra        []Option         `json:"extra_options,omitempty"`
	// Notes say what makes these numbers differ from a plain direct-I/O
	// measurement of a device; callers must show them with the results.
	Notes []string `json:"notes,omitempty"`
}

// PlannedProfile is one profile with the fio options it will run with.
type PlannedProfile struct {
	Profile        string `json:"profile"`
	Description    string `json:"description"`
	RuntimeSeconds int    `json:"runtime_s"`
	// Options are all of fio's job options for it, in order: the base
	// options, the profile's own, then the extra ones (fio applies the
	// last of repeated options).
	Options []Option `json:"options"`
	Command []string `json:"command"`
}

// Phase is when something ran.
type Phase struct {
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
}

// Seconds is the phase's length.
func (p Phase) Seconds() float64 { return p.Ended.Sub(p.Started).Seconds() }

// ProfileResult is one profile's measurement.
type ProfileResult struct {
	PlannedProfile
	Phase
	Report
}

// Result is a whole benchmark: what was planned and what finished.
type Result struct {
	Plan     Plan            `json:"plan"`
	Layout   *Phase          `json:"layout,omitempty"` // writing the test file; nil when it did not finish
	Profiles []ProfileResult `json:"profiles"`
	// Interrupted is set when the context was cancelled: Profiles hold
	// those that finished before.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Hooks let a caller follow a running benchmark (to print progress); any
// of them may be nil. They are called on the goroutine that calls Run.
type Hooks struct {
	LayoutStart  func(sizeBytes int64)
	ProfileStart func(i, n int, p PlannedProfile)
	ProfileDone  func(ProfileResult)
}

// Bench is a prepared storage benchmark: fio found, the directory checked
// and its test file created. Close removes the test file.
type Bench struct {
	opts Options
	log  *slog.Logger
	plan Plan
	dir  *claim.Dir // Plan.Dir, held open
	mark claim.Mark // the test file's: its name holds the id
	done bool       // closed
}

// Prepare checks everything that can be checked before measuring: that fio
// is installed (ErrNotInstalled), the options (InputError), that Dir
// exists and is writable, whether its file system supports direct I/O,
// the test file's size and that it fits in the free space. It creates the
// (empty) test file; the caller must Close the Bench.
//
// fio opens the test file by its path, as root when oltplab runs as
// root: Dir must be a directory nobody else could put something in the
// file's place in (claim.Within: no link or directory of another user's
// on the way, none others may write without the sticky bit, no system
// directory), or the refusal is a *claim.Error. The file is created there
// with O_EXCL, never through a link, named oltplab-fio-ID.dat after its
// mark (claim.KindTestFile), which Close checks before it removes it.
func Prepare(ctx context.Context, opts Options) (*Bench, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	bin, err := lookPath("fio", opts.Path)
	if err != nil {
		return nil, err
	}
	version, err := fioVersion(ctx, bin)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, inputErrorf("directory %s: %v", opts.Dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, inputErrorf("directory %s does not exist", opts.Dir)
	case err != nil:
		return nil, inputErrorf("directory %s: %v", opts.Dir, err)
	case !fi.IsDir():
		return nil, inputErrorf("%s is not a directory", opts.Dir)
	}
	dir, err := claim.Within(abs, nil, false)
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", opts.Dir, err)
	}
	m := claim.NewMark(claim.KindTestFile)
	name := strings.Replace(testFilePattern, "*", m.ID, 1)
	file := filepath.Join(dir.Path(), name)
	if opts.Tracker != nil {
		if err := opts.Tracker.Track(ctx, file, m); err != nil {
			dir.Close()
			return nil, err
		}
	}
	f, err := dir.CreateFile(name, 0o600)
	if err != nil {
		if opts.Tracker != nil {
			opts.Tracker.Removed(ctx, file, m)
		}
		dir.Close()
		return nil, inputErrorf("cannot create the test file in %s: %v", opts.Dir, unwrapPath(err))
	}
	f.Close()
	b := &Bench{opts: opts, log: lg, dir: dir, mark: m,
		plan: Plan{Fio: bin, FioVersion: version, Dir: dir.Path(), File: file, Extra: opts.Extra}}
	b.warnLeftovers()
	if err := b.prepare(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Bench) prepare() error {
	p := &b.plan
	fsType := "this file system"
	if d, err := sysstat.DeviceOf(p.Dir); err == nil {
		p.Device = &d
		fsType = d.FSType
		p.MemoryBacked = d.FSType == "tmpfs" || d.FSType == "ramfs"
	} else {
		p.Notes = append(p.Notes, "the device under the directory is unknown: "+err.Error())
	}
	direct, err := probeDirectIO(p.File)
	if err != nil {
		return fmt.Errorf("probe direct I/O in %s: %w", p.Dir, err)
	}
	p.DirectIO = direct
	for _, x := range b.opts.Extra {
		if x.Key == "direct" {
			p.DirectIO = direct && x.Value != "0"
		}
	}

	host, _ := sysstat.ReadHost()
	p.FileSizeBytes, p.SizeFrom = b.opts.SizeBytes, "--size"
	if p.FileSizeBytes == 0 {
		p.FileSizeBytes, p.SizeFrom = DefaultSize(host.MemoryBytes, p.DirectIO, p.MemoryBacked)
	}
	switch {
	case p.MemoryBacked:
		p.Notes = append(p.Notes, fmt.Sprintf("%s is memory-backed: the test file lives in memory, so this measures memory, not a storage device", fsType))
	case !direct:
		p.Notes = append(p.Notes, fmt.Sprintf("%s: direct I/O unsupported, buffered I/O measured through the page cache (test file %s, %s)",
			fsType, FormatBytes(p.FileSizeBytes), p.SizeFrom))
	case !p.DirectIO:
		p.Notes = append(p.Notes, "direct=0 given: buffered I/O measured through the page cache")
	}
	if host.MemoryBytes > 0 && p.FileSizeBytes < host.MemoryBytes && !p.MemoryBacked {
		p.Notes = append(p.Notes, fmt.Sprintf("the test file (%s) is smaller than the host's memory (%s): a cache below the file system (a RAID controller's, a virtual disk's on its host) may serve part of it",
			FormatBytes(p.FileSizeBytes), FormatBytes(host.MemoryBytes)))
	}
	if avail, total, ok := freeSpace(p.Dir); ok {
		headroom := min(int64(1<<30), total/20)
		if p.FileSizeBytes+headroom > avail {
			return inputErrorf("%s has %s free; the %s test file (%s) needs %s with headroom: choose a smaller --size",
				b.opts.Dir, FormatBytes(avail), FormatBytes(p.FileSizeBytes), p.SizeFrom, FormatBytes(p.FileSizeBytes+headroom))
		}
	}
	for _, prof := range b.opts.Profiles {
		if b.opts.Runtime != 0 {
			prof.Runtime = b.opts.Runtime
		}
		opts := prof.Options()
		if !direct {
			opts = append(opts, Option{"direct", "0"})
		}
		opts = append(opts, b.opts.Extra...)
		pp := PlannedProfile{Profile: prof.Name, Description: prof.Describe(), RuntimeSeconds: int(prof.Runtime / time.Second), Options: opts}
		pp.Command = append([]string{p.Fio}, profileArgs(prof.Name, p.File, p.FileSizeBytes, opts)...)
		p.Profiles = append(p.Profiles, pp)
	}
	return nil
}

// warnLeftovers warns about test files an oltplab killed outright (SIGKILL,
// power loss) could not remove. They are not removed here: another
// oltplab, perhaps on another host sharing the directory, may be using them.
func (b *Bench) warnLeftovers() {
	old, _ := filepath.Glob(filepath.Join(b.plan.Dir, testFilePattern))
	var names []string
	var bytes int64
	for _, f := range old {
		if f == b.plan.File {
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			names, bytes = append(names, filepath.Base(f)), bytes+fi.Size()
		}
	}
	if len(names) > 0 {
		b.log.Warn(fmt.Sprintf("%s holds %d test file(s) of an earlier storage bench that did not finish (%s): remove them unless one still runs",
			b.plan.Dir, len(names), FormatBytes(bytes)), "files", names)
	}
}

// DefaultSize is the test file's size when none is given, with the reason.
// With direct I/O the page cache is bypassed anyway; the file is still as
// large as the host's memory, so that no cache the host could have (its own
// page cache if direct I/O were silently ignored, a virtual disk's cache
// on a hypervisor of similar size) holds all of it. Without direct I/O it
// is twice the memory, so at most half of it can be cached. A
// memory-backed file system gets 1 GiB: its files are memory anyway.
func DefaultSize(memBytes int64, direct, memoryBacked bool) (int64, string) {
	const gib = 1 << 30
	roundUp := func(n int64) int64 { return (n + gib - 1) / gib * gib }
	switch {
	case memoryBacked:
		return gib, "default for a memory-backed file system"
	case memBytes <= 0:
		return 16 * gib, "default when the host's memory is unknown"
	case direct:
		return roundUp(memBytes), "default: the host's memory, so the page cache could not hold it"
	}
	return 2 * roundUp(memBytes), "default: twice the host's memory, so the page cache holds at most half of it"
}

// Plan is what the Bench will do.
func (b *Bench) Plan() Plan { return b.plan }

// Run lays the test file out and runs each profile. It returns what
// finished even with an error: a cancelled context stops fio and marks the
// result Interrupted (the error then wraps context.Canceled); a failed
// profile stops the benchmark.
func (b *Bench) Run(ctx context.Context, h Hooks) (*Result, error) {
	res := &Result{Plan: b.plan}
	done := func(err error) (*Result, error) {
		if ctx.Err() != nil {
			res.Interrupted = true
			return res, fmt.Errorf("storage benchmark: %w", ctx.Err())
		}
		return res, err
	}
	if h.LayoutStart != nil {
		h.LayoutStart(b.plan.FileSizeBytes)
	}
	lay := Phase{Started: time.Now()}
	if _, err := runFio(ctx, b.opts.Runner, b.plan.Fio, layoutArgs(b.plan.File, b.plan.FileSizeBytes)); err != nil {
		return done(fmt.Errorf("lay out the %s test file: %w", FormatBytes(b.plan.FileSizeBytes), err))
	}
	lay.Ended = time.Now()
	res.Layout = &lay
	b.log.Debug("fio: test file laid out", "file", b.plan.File, "bytes", b.plan.FileSizeBytes, "seconds", lay.Seconds())

	for i, pp := range b.plan.Profiles {
		if h.ProfileStart != nil {
			h.ProfileStart(i, len(b.plan.Profiles), pp)
		}
		pr := ProfileResult{PlannedProfile: pp, Phase: Phase{Started: time.Now()}}
		out, err := runFio(ctx, b.opts.Runner, pp.Command[0], pp.Command[1:])
		pr.Ended = time.Now()
		if err != nil {
			return done(fmt.Errorf("profile %s: %w", pp.Profile, err))
		}
		rep, err := Parse(bytes.NewReader(out))
		if err != nil {
			return done(fmt.Errorf("profile %s: %w", pp.Profile, err))
		}
		pr.Report = rep
		res.Profiles = append(res.Profiles, pr)
		if h.ProfileDone != nil {
			h.ProfileDone(pr)
		}
	}
	return done(nil)
}

// Close removes the test file: the file Prepare created, never what took
// its place (then left, with an error). It may be called more than once.
func (b *Bench) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	defer b.dir.Close()
	if err := b.dir.Remove(filepath.Base(b.plan.File), b.mark); err != nil {
		return fmt.Errorf("remove the test file: %w", err)
	}
	if b.opts.Tracker != nil {
		b.opts.Tracker.Removed(context.Background(), b.plan.File, b.mark)
	}
	return nil
}

// Measure prepares, runs and closes a benchmark: the whole scenario for
// callers that need no step in between (the latency layer's tests).
func Measure(ctx context.Context, opts Options, h Hooks) (*Result, error) {
	b, err := Prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Run(ctx, h)
}

// unwrapPath drops the *PathError wrapping (the path is already in the
// message) and keeps its cause, e.g. "permission denied".
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
