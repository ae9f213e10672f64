// Package agent is `oltplab agent`: it streams the host metrics of the
// machine it runs on (internal/sysstat: CPU, memory, disks, network) over
// HTTP to an oltplab on another machine, which records them as the
// database host's samples. It carries host metrics only: no database
// access, no credentials.
//
// It imports only sysstat.
package agent

// The protocol is HTTP: GET /v1/samples?interval=1s&dir=ROLE=PATH streams
// newline-delimited JSON, a Hello line (the host's description and the
// devices under the named directories) and then one Batch per interval,
// until the client goes away. Nothing can be sent to the agent but the
// query.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/sysstat"
)

// ProtocolVersion is bumped when a field changes meaning.
const ProtocolVersion = 1

// Interval bounds.
const (
	MinInterval     = 100 * time.Millisecond
	MaxInterval     = time.Minute
	DefaultInterval = time.Second
)

// Hello is the first line of a stream.
type Hello struct {
	Protocol int          `json:"protocol"`
	Host     sysstat.Host `json:"host"`
	// Roles maps devices of the agent's host to the roles of the
	// directories the client named ("data" -> the device under it).
	Roles    map[string][]string `json:"roles,omitempty"`
	Warnings []string            `json:"warnings,omitempty"`
}

// Sample is one value, as sysstat.HostSample.
type Sample struct {
	Metric string  `json:"m"`
	Device string  `json:"d,omitempty"`
	Value  float64 `json:"v"`
}

// Batch is the samples of one interval of the agent's host.
type Batch struct {
	UnixMillis int64    `json:"t"`
	Samples    []Sample `json:"s"`
}

// Server serves the agent's endpoints.
type Server struct {
	// Root is the root of /proc and /sys (tests use a captured tree); ""
	// is the live host.
	Root string
	Log  *slog.Logger
}

func (s Server) fs() sysstat.FS {
	if s.Root == "" {
		return sysstat.NewFS("/")
	}
	return sysstat.NewFS(s.Root)
}

func (s Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Handler returns the HTTP handler of the agent.
func (s Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/samples", s.samples)
	return mux
}

// Serve serves on ln until ctx ends, then shuts the server down.
func (s Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	}
}

// samples streams the host's samples to the client.
func (s Server) samples(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	interval := DefaultInterval
	if v := q.Get("interval"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < MinInterval || d > MaxInterval {
			http.Error(w, fmt.Sprintf("interval must be a duration within [%s, %s]", MinInterval, MaxInterval), http.StatusBadRequest)
			return
		}
		interval = d
	}
	dirs := map[string]string{}
	for _, d := range q["dir"] {
		role, path, ok := strings.Cut(d, "=")
		if !ok || role == "" || path == "" {
			http.Error(w, "dir must be ROLE=PATH", http.StatusBadRequest)
			return
		}
		dirs[role] = path
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	fs := s.fs()
	hello := Hello{Protocol: ProtocolVersion}
	host, err := fs.Host()
	if err != nil {
		hello.Warnings = append(hello.Warnings, "describe the host: "+err.Error())
	}
	hello.Host = host
	if len(dirs) > 0 {
		roles, err := fs.DeviceRoles(dirs)
		if err != nil {
			hello.Warnings = append(hello.Warnings, "mark devices of directories: "+err.Error())
		}
		hello.Roles = roles
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	if err := enc.Encode(hello); err != nil {
		return
	}
	flusher.Flush()
	s.log().Info("agent: streaming", "client", r.RemoteAddr, "interval", interval)

	hs := fs.NewHostSampler()
	if _, err := hs.Sample(time.Now()); err != nil {
		s.log().Warn("agent: read host counters", "err", err)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			s.log().Info("agent: client gone", "client", r.RemoteAddr)
			return
		case now := <-tick.C:
			xs, err := hs.Sample(now)
			if err != nil {
				s.log().Warn("agent: read host counters", "err", err)
			}
			b := Batch{UnixMillis: now.UnixMilli(), Samples: make([]Sample, len(xs))}
			for i, x := range xs {
				b.Samples[i] = Sample{Metric: x.Metric, Device: x.Device, Value: x.Value}
			}
			if err := enc.Encode(b); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// Stream is a client's connection to an agent.
type Stream struct {
	Hello Hello
	resp  *http.Response
	sc    *bufio.Scanner
}

// dialTimeout bounds connecting to an agent and reading its Hello.
const dialTimeout = 10 * time.Second

// ErrUnreachable is wrapped by Open's errors: no agent answered at the
// address within dialTimeout (nothing listens, the port is silent, the
// stream began with no hello), or what answered is not an agent of this
// protocol.
var ErrUnreachable = errors.New("no oltplab agent answers")

// Check connects to the agent at addr and waits for its hello, at most
// dialTimeout, then hangs up: an address to which the samplers could not
// connect is refused before anything is measured.
func Check(ctx context.Context, addr string) error {
	s, err := Open(ctx, addr, time.Second, nil)
	if err != nil {
		return err
	}
	return s.Close()
}

// Open connects to the agent at addr (HOST:PORT) and asks for samples
// every interval, with the devices under dirs (role -> path on the
// agent's host) marked. The stream lasts until ctx ends or Close.
func Open(ctx context.Context, addr string, interval time.Duration, dirs map[string]string) (*Stream, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("agent address %q: want HOST:PORT: %w", addr, err)
	}
	q := url.Values{}
	q.Set("interval", interval.String())
	for role, path := range dirs {
		q.Add("dir", role+"="+path)
	}
	u := url.URL{Scheme: "http", Host: addr, Path: "/v1/samples", RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("agent at %s: %w", addr, err)
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
		ResponseHeaderTimeout: dialTimeout,
	}}
	resp, err := client.Do(req)
	if err != nil {
		if pctx := ctx.Err(); pctx != nil {
			return nil, pctx
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, resp.Status)
	}
	// The hello too must come within dialTimeout: a server that answers
	// the request and then says nothing is not an agent.
	silent := time.AfterFunc(dialTimeout, func() { resp.Body.Close() })
	s := &Stream{resp: resp, sc: bufio.NewScanner(resp.Body)}
	s.sc.Buffer(make([]byte, 64<<10), 4<<20)
	if !s.sc.Scan() {
		silent.Stop()
		resp.Body.Close()
		return nil, fmt.Errorf("%w at %s: no hello within %s: %w", ErrUnreachable, addr, dialTimeout, orEOF(s.sc.Err()))
	}
	if !silent.Stop() {
		return nil, fmt.Errorf("%w at %s: no hello within %s", ErrUnreachable, addr, dialTimeout)
	}
	if err := json.Unmarshal(s.sc.Bytes(), &s.Hello); err != nil || s.Hello.Protocol != ProtocolVersion {
		resp.Body.Close()
		return nil, fmt.Errorf("%w at %s: it speaks another protocol (%d, want %d): %v", ErrUnreachable, addr, s.Hello.Protocol, ProtocolVersion, err)
	}
	return s, nil
}

// Next returns the next batch; an error when the stream ended.
func (s *Stream) Next() (Batch, error) {
	if !s.sc.Scan() {
		return Batch{}, orEOF(s.sc.Err())
	}
	var b Batch
	if err := json.Unmarshal(s.sc.Bytes(), &b); err != nil {
		return Batch{}, fmt.Errorf("agent batch: %w", err)
	}
	return b, nil
}

// Close ends the stream.
func (s *Stream) Close() error { return s.resp.Body.Close() }

// ErrStreamEnded: the agent closed the stream.
var ErrStreamEnded = errors.New("the agent ended the stream")

func orEOF(err error) error {
	if err == nil {
		return ErrStreamEnded
	}
	return err
}
