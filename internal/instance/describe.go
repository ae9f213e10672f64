package instance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oltplab/oltplab/internal/latency"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// Description is everything an instance was given and how: recorded in
// the context of every result measured on it.
type Description struct {
	ID        string                    `json:"id"`
	Spec      Spec                      `json:"spec"`
	Server    *ServerInfo               `json:"server,omitempty"`
	EngineDir string                    `json:"engine_dir"`
	WALDir    string                    `json:"wal_dir,omitempty"`
	Devices   map[string]sysstat.Device `json:"devices,omitempty"` // "data", "wal"
	Controls  []Control                 `json:"controls"`
	// Settings are those oltplab gave the server (its defaults, then the
	// spec's); Effective what the server reports for the key ones.
	Settings  map[string]string `json:"settings,omitempty"`
	Effective map[string]string `json:"effective,omitempty"`
	Started   time.Time         `json:"started"`
	Restarts  []RestartReport   `json:"restarts,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
	// Latency is the latency layer under the directories (Spec.Latency):
	// its settings, how it is served, its figures so far and its cost.
	Latency *latency.Description `json:"latency,omitempty"`
}

// ServerInfo is the server process of an instance.
type ServerInfo struct {
	Binaries Binaries `json:"binaries"`
	OSUser   string   `json:"os_user"` // the account it runs as (a uid when oltplab's own)
	PID      int      `json:"pid,omitempty"`
	Port     int      `json:"port,omitempty"`
}

// Describe returns the instance's description.
func (i *Instance) Describe() Description {
	i.mu.Lock()
	defer i.mu.Unlock()
	d := Description{ID: i.id, Spec: i.spec, EngineDir: i.engineDir, WALDir: i.engineWALDir,
		Devices: i.devices, Controls: i.controls, Effective: i.effective, Started: i.started,
		Restarts: i.restarts, Notes: i.notes, Settings: map[string]string{}, Latency: i.describeLatency()}
	for _, s := range i.settings {
		d.Settings[s.name] = s.value
	}
	if i.eng.server() {
		d.Server = &ServerInfo{Binaries: i.bins, Port: i.port}
		if i.acct != nil {
			d.Server.OSUser = i.acct.Name
		} else {
			d.Server.OSUser = strconv.Itoa(os.Geteuid())
		}
		if i.proc != nil {
			d.Server.PID = i.proc.pid()
		}
	}
	return d
}

// RestartReport is what a restart did.
type RestartReport struct {
	At   time.Time `json:"at"`
	Cold bool      `json:"cold"`
	// CacheDropped says whether the OS page cache was dropped (cold
	// restarts only); Note says why not.
	CacheDropped bool    `json:"cache_dropped"`
	Note         string  `json:"note,omitempty"`
	StopSeconds  float64 `json:"stop_seconds"`
	StartSeconds float64 `json:"start_seconds"`
}

// Restart stops the server and starts it again with the same settings,
// port and password. cold also empties the caches in between: the
// engine's buffer pool goes with the server; the OS page cache is synced
// and dropped when oltplab may (root, writable /proc/sys/vm/drop_caches),
// and the report says when it could not. An embedded engine has no server:
// only the page cache is dropped.
func (i *Instance) Restart(ctx context.Context, cold bool) (RestartReport, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	r := RestartReport{At: time.Now(), Cold: cold}
	if i.stopped {
		return r, errors.New("restart: the instance is stopped")
	}
	t := time.Now()
	died := i.proc != nil && i.proc.exited()
	i.stopServer(ctx)
	if died {
		// A server that exited on its own (killed, crashed) may leave
		// workers behind that still hold its shared memory; they are
		// the instance's own, in its groups.
		i.killStragglers()
	}
	r.StopSeconds = time.Since(t).Seconds()
	if cold {
		r.CacheDropped, r.Note = dropPageCache()
	}
	if i.eng.server() {
		t = time.Now()
		if err := i.startServer(ctx, true); err != nil {
			i.restarts = append(i.restarts, r)
			return r, err
		}
		r.StartSeconds = time.Since(t).Seconds()
	}
	i.restarts = append(i.restarts, r)
	return r, nil
}

// dropPageCache writes dirty pages out and drops the clean ones, with
// dentries and inodes. It needs root.
func dropPageCache() (bool, string) {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o644); err != nil {
		return false, fmt.Sprintf("page cache not dropped: %v", unwrapPath(err))
	}
	return true, ""
}

// ErrEmbedded is returned for server measurements of an embedded engine.
var ErrEmbedded = errors.New("the engine is embedded in oltplab: no server process")

// ServerCPUSeconds is the CPU time the server's processes used since
// Start, restarts included: from the instance's cgroup (cpuacct, or cpu.stat
// in v2) when it has one, else from /proc (the server process and those
// below it, plus every server process that already exited).
func (i *Instance) ServerCPUSeconds() (float64, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.eng.server() {
		return 0, ErrEmbedded
	}
	if _, _, ok := i.cg.dir(ctlCPUAcct); ok {
		return i.cg.cpuSeconds()
	}
	total := i.priorCPU
	if i.proc != nil {
		// A process that exited is counted by the parent that waited
		// for it (cutime, cstime); the server waits for its workers.
		for _, p := range descendants(i.proc.pid()) {
			total += float64(p.UTime+p.STime+p.CUTime+p.CSTime) / clockTicks
		}
	}
	return total, nil
}

// IOCounters are the block I/O the server's processes issued to one
// device, as its cgroup counted it.
type IOCounters struct {
	ReadIOs    uint64 `json:"read_ios"`
	WriteIOs   uint64 `json:"write_ios"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
}

// IOCounters returns the instance cgroup's I/O counters by device
// ("MAJ:MIN"). In cgroup v1 they count only the I/O the throttle sees
// (direct and synchronous, the engine's own), and only on a device where
// some group has a throttle set; writeback by the kernel is not in them.
func (i *Instance) IOCounters() (map[string]IOCounters, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.eng.server() {
		return nil, ErrEmbedded
	}
	d, v2, ok := i.cg.dir(ctlBlkio)
	if !ok {
		return nil, errors.New("no blkio/io cgroup: I/O is not accounted per instance")
	}
	if v2 {
		f, err := os.Open(filepath.Join(d, "io.stat"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return parseIOStat(f)
	}
	ios, err := os.Open(filepath.Join(d, "blkio.throttle.io_serviced"))
	if err != nil {
		return nil, err
	}
	defer ios.Close()
	bytes, err := os.Open(filepath.Join(d, "blkio.throttle.io_service_bytes"))
	if err != nil {
		return nil, err
	}
	defer bytes.Close()
	return parseBlkioThrottle(ios, bytes)
}

// parseBlkioThrottle reads cgroup v1 blkio.throttle.io_serviced and
// io_service_bytes ("MAJ:MIN Read N" lines, "Total N" last).
func parseBlkioThrottle(ios, bytes io.Reader) (map[string]IOCounters, error) {
	out := map[string]IOCounters{}
	for _, f := range []struct {
		r             io.Reader
		read, written func(*IOCounters) *uint64
	}{
		{ios, func(c *IOCounters) *uint64 { return &c.ReadIOs }, func(c *IOCounters) *uint64 { return &c.WriteIOs }},
		{bytes, func(c *IOCounters) *uint64 { return &c.ReadBytes }, func(c *IOCounters) *uint64 { return &c.WriteBytes }},
	} {
		sc := bufio.NewScanner(f.r)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 {
				continue // "Total N"
			}
			v, err := strconv.ParseUint(fields[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("blkio line %q: %w", sc.Text(), err)
			}
			c := out[fields[0]]
			switch fields[1] {
			case "Read":
				*f.read(&c) = v
			case "Write":
				*f.written(&c) = v
			}
			out[fields[0]] = c
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseIOStat reads cgroup v2 io.stat ("MAJ:MIN rbytes=N wbytes=N rios=N
// wios=N dbytes=N dios=N").
func parseIOStat(r io.Reader) (map[string]IOCounters, error) {
	out := map[string]IOCounters{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		var c IOCounters
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("io.stat line %q: %w", sc.Text(), err)
			}
			switch k {
			case "rbytes":
				c.ReadBytes = n
			case "wbytes":
				c.WriteBytes = n
			case "rios":
				c.ReadIOs = n
			case "wios":
				c.WriteIOs = n
			}
		}
		out[fields[0]] = c
	}
	return out, sc.Err()
}
