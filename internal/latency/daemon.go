package latency

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The layer's file systems are served by a process of their own (the
// daemon): oltplab's executable started again under the name daemonName.
// Its CPU time is then the layer's alone (the driver's own CPU per
// transaction stays the driver's), its garbage collector pauses no one
// else, and it dies with oltplab (parent-death signal) like a managed
// server. It gets every descriptor it needs from oltplab (the FUSE
// connections, already mounted; the backing directories) and no path:
// it reads and writes nothing but the backing directories.

// daemonName is argv[0] of the daemon: how oltplab's main (and a test
// binary's TestMain) knows it must serve a layer (IsDaemon, DaemonMain).
const daemonName = "oltplab-latency-layer"

// IsDaemon reports whether this process was started as a layer's
// daemon: main must then call DaemonMain and exit with its code.
func IsDaemon() bool { return filepath.Base(os.Args[0]) == daemonName }

// The daemon's descriptors: the control socket, then for each mount its
// FUSE connection and its backing directory.
const (
	controlFD    = 3
	firstMountFD = 4
)

// daemonProcs is the daemon's GOMAXPROCS: its reads and writes of the
// backing files hold their processor (rawPread), so it needs more than
// the host has CPUs to serve other requests meanwhile.
const daemonProcs = 32

// daemonConfig is the first message on the control socket.
type daemonConfig struct {
	Settings      string        `json:"settings"`
	Seed          uint64        `json:"seed"`
	Roles         []string      `json:"roles"` // the mounts, in descriptor order
	Writeback     bool          `json:"writeback"`
	MaxBackground int           `json:"max_background"`
	MaxWrite      int           `json:"max_write"`
	EntryTimeout  time.Duration `json:"entry_timeout"`
}

// request and reply are the messages that follow: oltplab asks for a
// snapshot; the daemon answers ready once, then each request.
type request struct {
	Op string `json:"op"` // "snapshot"
}

type reply struct {
	Ready    bool          `json:"ready,omitempty"`
	Error    string        `json:"error,omitempty"`
	Snapshot *wireSnapshot `json:"snapshot,omitempty"`
}

type wireSnapshot struct {
	At         time.Time                     `json:"at"`
	CPUSeconds float64                       `json:"cpu_seconds"`
	Mounts     map[string][NumKinds]wireKind `json:"mounts"`
}

type wireKind struct {
	Seen    []byte `json:"seen"` // HdrHistogram V2 compressed
	Own     []byte `json:"own"`
	Delayed int64  `json:"delayed_ns"`
	Errors  int64  `json:"errors"`
}

// DaemonMain serves the layer oltplab started this process for, until
// its file systems are unmounted or oltplab goes; the exit code says how
// it ended. It writes diagnostics to stderr, which oltplab logs.
func DaemonMain() int {
	logger := log.New(os.Stderr, "", 0)
	runtime.GOMAXPROCS(max(daemonProcs, runtime.NumCPU()))
	ctl := os.NewFile(controlFD, "control")
	if err := serve(ctl, logger); err != nil {
		logger.Printf("latency layer: %v", err)
		return 1
	}
	return 0
}

func serve(ctl *os.File, logger *log.Logger) error {
	// Every file the server keeps open is open here too, twice.
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	dec := json.NewDecoder(bufio.NewReader(ctl))
	enc := json.NewEncoder(ctl)
	var cfg daemonConfig
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("read the configuration: %w", err)
	}
	settings, err := Parse(cfg.Settings)
	if err != nil {
		_ = enc.Encode(reply{Error: err.Error()})
		return err
	}
	type mount struct {
		role string
		srv  *fuse.Server
		rec  *recorder
	}
	var mounts []mount
	for i, role := range cfg.Roles {
		fuseFD, rootFD := firstMountFD+2*i, firstMountFD+2*i+1
		rec := newRecorder()
		srv, err := newServer(cfg, settings, role, fuseFD, rootFD, uint64(i), rec, logger)
		if err != nil {
			err = fmt.Errorf("%s: %w", role, err)
			_ = enc.Encode(reply{Error: err.Error()})
			return err
		}
		mounts = append(mounts, mount{role, srv, rec})
	}
	var served sync.WaitGroup
	for _, m := range mounts {
		served.Go(m.srv.Serve)
	}
	allDone := make(chan struct{})
	go func() {
		served.Wait()
		close(allDone)
	}()
	if err := enc.Encode(reply{Ready: true}); err != nil {
		return fmt.Errorf("answer oltplab: %w", err)
	}
	// Requests until oltplab closes the socket (or dies: then the kernel
	// has sent the parent-death signal already). Unmounting ends Serve.
	reqs := make(chan request)
	go func() {
		defer close(reqs)
		for {
			var r request
			if err := dec.Decode(&r); err != nil {
				return
			}
			reqs <- r
		}
	}()
	for {
		select {
		case r, ok := <-reqs:
			if !ok {
				return nil // oltplab is done with the layer
			}
			switch r.Op {
			case "snapshot":
				s := &wireSnapshot{At: time.Now(), CPUSeconds: ownCPUSeconds(), Mounts: map[string][NumKinds]wireKind{}}
				var encErr error
				for _, m := range mounts {
					var ks [NumKinds]wireKind
					snap := m.rec.snapshot()
					for k, f := range snap.Kinds {
						seen, err1 := f.Seen.EncodeV2()
						own, err2 := f.Own.EncodeV2()
						if encErr = errors.Join(err1, err2); encErr != nil {
							break
						}
						ks[k] = wireKind{Seen: seen, Own: own, Delayed: int64(f.Delayed), Errors: f.Errors}
					}
					s.Mounts[m.role] = ks
				}
				if encErr != nil {
					_ = enc.Encode(reply{Error: "encode histograms: " + encErr.Error()})
					continue
				}
				if err := enc.Encode(reply{Snapshot: s}); err != nil {
					return nil
				}
			default:
				_ = enc.Encode(reply{Error: fmt.Sprintf("unknown request %q", r.Op)})
			}
		case <-allDone:
			return nil // unmounted: oltplab took its last snapshot before
		}
	}
}

// newServer serves one mounted FUSE connection over the backing
// directory rootFD.
func newServer(cfg daemonConfig, s Settings, role string, fuseFD, rootFD int, stream uint64, rec *recorder, logger *log.Logger) (*fuse.Server, error) {
	root := &node{b: &backing{root: rootFD, writeback: cfg.Writeback}}
	entry := cfg.EntryTimeout
	o := &fs.Options{EntryTimeout: &entry, AttrTimeout: &entry, Logger: logger}
	o.MountOptions = fuse.MountOptions{
		Name:          "oltplab",
		MaxBackground: cfg.MaxBackground,
		MaxWrite:      cfg.MaxWrite,
		DisableXAttrs: true,
		Logger:        logger,
	}
	if cfg.Writeback {
		o.MountOptions.ExtraCapabilities |= fuse.CAP_WRITEBACK_CACHE
	}
	// Asynchronous direct I/O (libaio, io_uring) reaches the layer as
	// several requests at once, as it would reach a device.
	o.MountOptions.ExtraCapabilities |= fuse.CAP_ASYNC_DIO
	raw := fs.NewNodeFS(root, o)
	wrapped := &delayed{RawFileSystem: raw, draw: newDrawer(s, cfg.Seed+stream*0x9e3779b97f4a7c15), rec: rec}
	srv, err := fuse.NewServer(wrapped, fmt.Sprintf("/dev/fd/%d", fuseFD), &o.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("start serving the mount: %w", err)
	}
	return srv, nil
}

// ownCPUSeconds is this process's CPU time, user and system.
func ownCPUSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
