// Package agent is `oltplab agent`: it streams the host metrics of the
// machine it runs on (internal/sysstat: CPU, memory, disks, network) to an
// oltplab on another machine, which records them as the database host's
// samples; and, for a plan's runner that presents its token, it starts,
// describes and stops managed instances on its host (internal/instance,
// their directories only below its --allow-dir roots), tunnels
// connections to them, and runs the driver there (a load generator's
// placement). It runs no command it is sent: only those operations.
//
// Every connection is TLS (trust.go); every request is logged without
// its secrets.
package agent

// The protocol is HTTP over TLS: GET /v1/samples?interval=1s&dir=ROLE=PATH
// streams newline-delimited JSON, a Hello line (the host's description
// and the devices under the named directories) and then one Batch per
// interval, until the client goes away. The acting endpoints are in
// instances.go and drive.go.

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Identity is the agent's certificate; nil serves with one made for
	// this process only.
	Identity *Identity
	// Token, when set, is required of every request; without it the
	// agent serves host metrics only, on loopback only.
	Token string
	// AllowDirs are the directories below which the agent may create
	// anything (a managed instance's data_dir and wal_dir); none: it
	// starts no instance.
	AllowDirs []string
	// Lease is how long an instance outlives its runner's last word
	// (0: DefaultLease).
	Lease time.Duration

	inst *instances // the managed instances (New)
}

// init prepares the server's state (Handler and Serve call it).
func (s *Server) init() {
	if s.inst == nil {
		s.inst = newInstances(s)
	}
}

func (s *Server) fs() sysstat.FS {
	if s.Root == "" {
		return sysstat.NewFS("/")
	}
	return sysstat.NewFS(s.Root)
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Handler returns the HTTP handler of the agent: every request logged,
// every one but the metrics stream authorized.
func (s *Server) Handler() http.Handler {
	s.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/samples", s.samples)
	mux.HandleFunc("GET /v1/ping", s.ping)
	s.inst.routes(mux)
	s.driveRoutes(mux)
	s.cpuRoutes(mux)
	return s.logged(mux)
}

// logged logs every request: who, what, the answer's status and time;
// never a header, so never the token.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		who := s.authorized(r)
		switch {
		case who == "" && !(s.Token == "" && r.URL.Path == "/v1/samples"):
			sw.status = http.StatusUnauthorized
			if s.Token == "" {
				http.Error(sw, "this agent has no token: it serves host metrics only (start it with --token-file)", http.StatusForbidden)
				sw.status = http.StatusForbidden
			} else {
				http.Error(sw, "unauthorized: present the agent's token", http.StatusUnauthorized)
			}
		default:
			next.ServeHTTP(sw, r.WithContext(withAuth(r.Context(), who)))
		}
		s.log().Info("agent: request", "client", r.RemoteAddr, "method", r.Method, "path", r.URL.Path,
			"auth", authName(who), "status", sw.status, "ms", time.Since(start).Milliseconds())
	})
}

// statusWriter remembers the status of an answer for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (tunnels).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ping answers at once: the runner measures round trips with it.
func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "pong")
}

// Serve serves on ln, over TLS, until ctx ends, then stops every
// instance it started and shuts the server down. It refuses a listener
// off loopback when the server has no token.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.init()
	if err := CheckListen(ln.Addr().String(), s.Token != ""); err != nil {
		return err
	}
	id := s.Identity
	if id == nil {
		eph, err := EphemeralIdentity()
		if err != nil {
			return err
		}
		id = &eph
	}
	tln := tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{id.Cert}})
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(s.log().Handler(), slog.LevelWarn)}
	reap, stopReap := context.WithCancel(ctx)
	reaped := make(chan struct{})
	go func() { defer close(reaped); s.inst.reap(reap) }()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(tln) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}
	stopReap()
	<-reaped
	s.inst.stopAll(context.WithoutCancel(ctx), "the agent stopped")
	return err
}

// samples streams the host's samples to the client.
func (s *Server) samples(w http.ResponseWriter, r *http.Request) {
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
func Check(ctx context.Context, c Client) error {
	s, err := Open(ctx, c, time.Second, nil)
	if err != nil {
		return err
	}
	return s.Close()
}

// Open connects to the agent at addr (HOST:PORT) and asks for samples
// every interval, with the devices under dirs (role -> path on the
// agent's host) marked. The stream lasts until ctx ends or Close.
func Open(ctx context.Context, c Client, interval time.Duration, dirs map[string]string) (*Stream, error) {
	addr := c.Addr
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("agent address %q: want HOST:PORT: %w", addr, err)
	}
	q := url.Values{}
	q.Set("interval", interval.String())
	for role, path := range dirs {
		q.Add("dir", role+"="+path)
	}
	u := url.URL{Scheme: "https", Host: addr, Path: "/v1/samples", RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("agent at %s: %w", addr, err)
	}
	c.authorize(req)
	client, err := c.httpClient(dialTimeout)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		if pctx := ctx.Err(); pctx != nil {
			return nil, pctx
		}
		if errors.Is(err, ErrTrust) {
			return nil, fmt.Errorf("agent at %s: %w", addr, err)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, addr, err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &RemoteError{Addr: addr, Status: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
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
