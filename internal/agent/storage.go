package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/fio"
)

// The storage step beside the data (the agent's token only):
//
//	POST /v1/instances/{id}/storage  StorageRequest -> a stream of
//	     StorageEvent lines (newline-delimited JSON): the plan, then the
//	     layout's and each profile's start and end, then the end
//
// fio runs on the instance's data directory, inside its cgroups, as the
// storage step runs it on a local instance (internal/fio: the test file
// created there with O_EXCL under claim's mark, removed at the end). It
// ends when the runner hangs up, when the instance stops (its lease
// lapsed) or when the agent stops: an agent no runner talks to has no
// fio running. The runner stores what the stream said.

// StorageRequest is one storage benchmark on an instance's data
// directory: the storage step's options, fio's profiles by name.
type StorageRequest struct {
	Profiles  []string      `json:"profiles"`
	Runtime   time.Duration `json:"runtime,omitempty"`
	SizeBytes int64         `json:"size_bytes,omitempty"`
	Extra     []fio.Option  `json:"extra,omitempty"`
}

// StorageEvent is one line of a storage benchmark's stream; one field set.
type StorageEvent struct {
	Plan         *fio.Plan           `json:"plan,omitempty"`
	LayoutStart  int64               `json:"layout_start,omitempty"`
	LayoutDone   *fio.Phase          `json:"layout_done,omitempty"`
	ProfileStart *fio.PlannedProfile `json:"profile_start,omitempty"`
	ProfileDone  *fio.ProfileResult  `json:"profile_done,omitempty"`
	End          *StorageEnd         `json:"end,omitempty"`
}

// StorageEnd ends a stream: whether fio was interrupted, its error, and
// the test file's removal.
type StorageEnd struct {
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	Cleanup     string `json:"cleanup,omitempty"` // the test file could not be removed
}

// agentFioOptions are the fio options a runner may give to the agent's
// fio: they shape the I/O only. Every other option is refused, since
// some run commands (exec_prerun), load code (ioengine=external) or
// write files elsewhere (write_iolog, write_bw_log): the agent runs no
// command it is sent and creates nothing outside its roots.
var agentFioOptions = []string{"bs", "blocksize", "blocksize_range", "bsrange", "bssplit", "rw", "readwrite",
	"rwmixread", "rwmixwrite", "iodepth", "iodepth_batch", "iodepth_batch_complete", "iodepth_low", "numjobs",
	"direct", "buffered", "sync", "fsync", "fdatasync", "end_fsync", "fsync_on_close", "invalidate",
	"randrepeat", "norandommap", "random_distribution", "ramp_time", "thinktime", "rate", "rate_iops",
	"zero_buffers", "refill_buffers", "buffer_compress_percentage", "ioengine", "hipri", "fixedbufs"}

// agentIOEngines are the ioengine values allowed (none loads code).
var agentIOEngines = []string{"psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap"}

// checkAgentFioOption refuses an option the agent does not run.
func checkAgentFioOption(o fio.Option) error {
	if _, err := fio.ParseOption(o.String()); err != nil {
		return err
	}
	if !slices.Contains(agentFioOptions, o.Key) {
		return fmt.Errorf("fio option %s: an agent runs only the options that shape the I/O (%s)", o.Key, strings.Join(agentFioOptions, ", "))
	}
	if o.Key == "ioengine" && !slices.Contains(agentIOEngines, o.Value) {
		return fmt.Errorf("fio option ioengine=%s: an agent runs the engines %s", o.Value, strings.Join(agentIOEngines, ", "))
	}
	return nil
}

func (is *instances) storageRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/instances/{id}/storage", is.storage)
}

func (is *instances) storage(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	var req StorageRequest
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("storage request: %w", err))
		return
	}
	profiles, err := fio.LookupProfiles(strings.Join(req.Profiles, ","))
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	for _, o := range req.Extra {
		if err := checkAgentFioOption(o); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
	}
	dir := m.inst.Spec().DataDir
	// The instance's data directory was checked against the roots when
	// it started; checked again, as nothing is created elsewhere.
	if err := is.s.allowed("data_dir", dir); err != nil || dir == "" {
		if err == nil {
			err = errors.New("the instance has no data directory")
		}
		fail(w, http.StatusForbidden, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
		return
	}
	// fio lives as long as the request and the instance, whichever ends
	// first (the runner gone, the lease lapsed, the agent stopping).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(m.work, cancel)
	defer stop()
	log := is.s.log().With("instance", m.id, "runner", m.runner)
	b, err := fio.Prepare(ctx, fio.Options{Dir: dir, Profiles: profiles, Runtime: req.Runtime, SizeBytes: req.SizeBytes,
		Extra: req.Extra, Logger: log, Runner: m.inst.RunInside})
	if err != nil {
		status := http.StatusUnprocessableEntity
		if errors.Is(err, fio.ErrNotInstalled) {
			status = http.StatusNotImplemented
		}
		fail(w, status, err)
		return
	}
	p := b.Plan()
	log.Info("agent: storage benchmark", "dir", p.Dir, "file", p.File, "bytes", p.FileSizeBytes, "profiles", req.Profiles)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	send := func(e StorageEvent) {
		_ = enc.Encode(e) // a runner gone ends ctx: fio stops
		flusher.Flush()
	}
	send(StorageEvent{Plan: &p})
	res, rerr := b.Run(ctx, fio.Hooks{
		LayoutStart:  func(n int64) { send(StorageEvent{LayoutStart: max(n, 1)}) },
		ProfileStart: func(i, n int, pp fio.PlannedProfile) { send(StorageEvent{ProfileStart: &pp}) },
		ProfileDone:  func(pr fio.ProfileResult) { send(StorageEvent{ProfileDone: &pr}) },
	})
	end := StorageEnd{}
	if res != nil {
		end.Interrupted = res.Interrupted
		if res.Layout != nil {
			send(StorageEvent{LayoutDone: res.Layout})
		}
	}
	if rerr != nil {
		end.Error = rerr.Error()
	}
	if cerr := b.Close(); cerr != nil {
		end.Cleanup = cerr.Error()
		log.Warn("agent: storage benchmark: remove the test file", "file", p.File, "err", cerr)
	}
	log.Info("agent: storage benchmark ended", "profiles", len(res.Profiles), "interrupted", end.Interrupted, "err", end.Error)
	send(StorageEvent{End: &end})
}

// RemoteBench is a storage benchmark running on an agent's host, beside
// an instance's data: what internal/scenario stores as it stores a local
// fio.Bench.
type RemoteBench struct {
	addr string
	plan fio.Plan
	resp *http.Response
	sc   *bufio.Scanner
}

// Storage asks the agent to run a storage benchmark on the instance's
// data directory and returns it once the agent prepared it (fio found,
// the test file created): Plan is known; Run follows it; Close hangs up,
// which stops fio on the agent. The request lives as long as ctx.
func (c Client) Storage(ctx context.Context, id string, req StorageRequest) (*RemoteBench, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+c.Addr+"/v1/instances/"+id+"/storage", bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("agent at %s: %w", c.Addr, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	c.authorize(hr)
	hc, err := c.httpClient(0)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrTrust) {
			return nil, fmt.Errorf("agent at %s: %w", c.Addr, err)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var e apiError
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return nil, &RemoteError{Addr: c.Addr, Status: resp.StatusCode, Msg: e.Error}
	}
	rb := &RemoteBench{addr: c.Addr, resp: resp, sc: bufio.NewScanner(resp.Body)}
	rb.sc.Buffer(make([]byte, 64<<10), 16<<20)
	e, err := rb.next()
	if err != nil || e.Plan == nil {
		resp.Body.Close()
		return nil, fmt.Errorf("agent at %s: the storage benchmark began without its plan: %v", c.Addr, err)
	}
	rb.plan = *e.Plan
	return rb, nil
}

func (b *RemoteBench) next() (StorageEvent, error) {
	var e StorageEvent
	if !b.sc.Scan() {
		err := b.sc.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return e, fmt.Errorf("%w at %s during the storage benchmark: %w", ErrUnreachable, b.addr, err)
	}
	if err := json.Unmarshal(b.sc.Bytes(), &e); err != nil {
		return e, fmt.Errorf("agent at %s: storage benchmark: %w", b.addr, err)
	}
	return e, nil
}

// Plan is what the agent prepared (paths on its host).
func (b *RemoteBench) Plan() fio.Plan { return b.plan }

// Run follows the benchmark on the agent, calling h as its events
// arrive, and returns what finished, as fio.Bench.Run does: ctx ended
// hangs up (fio stops on the agent) and marks the result Interrupted.
func (b *RemoteBench) Run(ctx context.Context, h fio.Hooks) (*fio.Result, error) {
	res := &fio.Result{Plan: b.plan}
	stop := context.AfterFunc(ctx, func() { b.resp.Body.Close() })
	defer stop()
	for {
		e, err := b.next()
		if ctx.Err() != nil {
			res.Interrupted = true
			return res, fmt.Errorf("storage benchmark: %w", ctx.Err())
		}
		if err != nil {
			return res, err
		}
		switch {
		case e.LayoutStart > 0 && h.LayoutStart != nil:
			h.LayoutStart(b.plan.FileSizeBytes)
		case e.LayoutDone != nil:
			res.Layout = e.LayoutDone
		case e.ProfileStart != nil:
			if h.ProfileStart != nil {
				h.ProfileStart(len(res.Profiles), len(b.plan.Profiles), *e.ProfileStart)
			}
		case e.ProfileDone != nil:
			res.Profiles = append(res.Profiles, *e.ProfileDone)
			if h.ProfileDone != nil {
				h.ProfileDone(*e.ProfileDone)
			}
		case e.End != nil:
			res.Interrupted = e.End.Interrupted
			var errs []error
			if e.End.Error != "" {
				errs = append(errs, fmt.Errorf("on the agent at %s: %s", b.addr, e.End.Error))
			}
			if e.End.Cleanup != "" {
				errs = append(errs, fmt.Errorf("on the agent at %s: %s", b.addr, e.End.Cleanup))
			}
			return res, errors.Join(errs...)
		}
	}
}

// Close hangs up.
func (b *RemoteBench) Close() error { return b.resp.Body.Close() }
