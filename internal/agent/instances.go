package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/instance"
)

// The acting endpoints (the agent's token only):
//
//	POST   /v1/instances             start one: StartRequest -> InstanceInfo
//	GET    /v1/instances             those running, InstanceInfo without secrets
//	GET    /v1/instances/{id}        one, described
//	DELETE /v1/instances/{id}        stop it
//	POST   /v1/instances/{id}/lease  the runner is still there: extend its lease
//	GET    /v1/instances/{id}/connect  a tunnel to its server (the token or
//	                                   the instance's ticket), tunnel.go
//	POST   /v1/instances/{id}/storage  fio beside its data, storage.go
//	POST   /v1/instances/{id}/backups  its backups beside its data, backup.go,
//	                                   and their restores, restore.go
//
// An instance lives as long as its lease: a runner renews it every
// Lease/3; one whose runner went silent is stopped (reap), so that an
// agent no runner talks to holds nothing running.

// DefaultLease is how long an instance outlives its runner's last word.
const DefaultLease = 30 * time.Second

// StartRequest asks for a managed instance.
type StartRequest struct {
	Spec instance.Spec `json:"spec"`
	// Runner names the plan's runner (host and process), for the log.
	Runner string `json:"runner"`
}

// InstanceInfo is a managed instance of the agent.
type InstanceInfo struct {
	ID          string               `json:"id"`
	Name        string               `json:"name"`
	Runner      string               `json:"runner,omitempty"`
	URL         string               `json:"url"`                // on the agent's loopback, without the password
	Password    string               `json:"password,omitempty"` // on start only
	Ticket      string               `json:"ticket,omitempty"`   // on start only: lets a driver tunnel to it
	Lease       time.Duration        `json:"lease"`
	Alive       bool                 `json:"alive"`
	Description instance.Description `json:"description"`
}

type managed struct {
	id, runner, ticket string
	inst               *instance.Instance
	end                context.CancelFunc
	// work is the life of what runs beside the instance (fio): it ends
	// first when the instance stops.
	work    context.Context
	endWork context.CancelFunc
	backups map[string]heldBackup // taken and not yet removed (backup.go)
	// restored, for an instance started on a restored backup, is that
	// copy (restore.go): removed when it stops, unless kept.
	restored *heldBackup
	expires  time.Time
}

type instances struct {
	s  *Server
	mu sync.Mutex
	m  map[string]*managed
}

func newInstances(s *Server) *instances { return &instances{s: s, m: map[string]*managed{}} }

func (is *instances) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/instances", is.start)
	mux.HandleFunc("GET /v1/instances", is.list)
	mux.HandleFunc("GET /v1/instances/{id}", is.get)
	mux.HandleFunc("DELETE /v1/instances/{id}", is.stop)
	mux.HandleFunc("POST /v1/instances/{id}/lease", is.renew)
	mux.HandleFunc("GET /v1/instances/{id}/connect", is.connect)
	is.storageRoutes(mux)
	is.backupRoutes(mux)
	is.restartRoutes(mux)
}

func (is *instances) lease() time.Duration {
	if is.s.Lease > 0 {
		return is.s.Lease
	}
	return DefaultLease
}

// ErrOutsideAllowed is wrapped by the refusal of a directory outside the
// agent's --allow-dir roots.
var ErrOutsideAllowed = errors.New("outside the agent's --allow-dir roots")

// allowed refuses a directory that is not below one of the agent's roots
// (compared as cleaned absolute paths; claim.Take then refuses links and
// directories others could change on the way, as for a local instance).
func (s *Server) allowed(field, dir string) error {
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s %q: want an absolute path on the agent's host", field, dir)
	}
	p := filepath.Clean(dir)
	for _, root := range s.AllowDirs {
		r := filepath.Clean(root)
		if p != r && strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return noLinkBelow(field, r, p)
		}
	}
	if len(s.AllowDirs) == 0 {
		return fmt.Errorf("%s %s: %w (it was started without any: it starts no instance)", field, dir, ErrOutsideAllowed)
	}
	return fmt.Errorf("%s %s: %w (%s)", field, dir, ErrOutsideAllowed, strings.Join(s.AllowDirs, ", "))
}

// ErrLinkBelowRoot is wrapped by the refusal of a path that goes through
// a symbolic link below an --allow-dir root: the agent follows none there
// (claim trusts links of root's, which would lead it elsewhere).
var ErrLinkBelowRoot = errors.New("a symbolic link below the agent's --allow-dir root")

// noLinkBelow refuses p (below root) when one of its existing components
// below root is a symbolic link.
func noLinkBelow(field, root, p string) error {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return fmt.Errorf("%s %s: %w", field, p, err)
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", field, p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %s: %s is %w: the agent follows none", field, p, cur, ErrLinkBelowRoot)
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is an error answer: its text says what was refused, never a
// secret (the spec holds none; a target's password is the agent's own).
type apiError struct {
	Error string `json:"error"`
}

func fail(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, apiError{Error: err.Error()})
}

// admin refuses a request that does not carry the agent's own token (an
// instance's ticket only tunnels).
func admin(w http.ResponseWriter, r *http.Request) bool {
	if authOf(r.Context()) != authToken {
		fail(w, http.StatusForbidden, errors.New("this operation needs the agent's token"))
		return false
	}
	return true
}

func (is *instances) start(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	var req StartRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("start request: %w", err))
		return
	}
	if req.Spec.Engine.Embedded() {
		fail(w, http.StatusBadRequest, fmt.Errorf("engine %s is embedded in the process that uses it: an agent starts servers only (postgres, mariadb)", req.Spec.Engine))
		return
	}
	for _, d := range []struct{ field, dir string }{{"data_dir", req.Spec.DataDir}, {"wal_dir", req.Spec.WALDir}} {
		if err := is.s.allowed(d.field, d.dir); err != nil {
			fail(w, http.StatusForbidden, err)
			return
		}
	}
	life, end := context.WithCancel(context.WithoutCancel(r.Context()))
	stopWatch := context.AfterFunc(r.Context(), end) // the runner gone during the start aborts it
	inst, err := instance.Start(life, req.Spec, is.s.log().With("runner", req.Runner))
	stopWatch()
	if err != nil {
		end()
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	m := &managed{id: inst.Describe().ID, runner: req.Runner, ticket: rand.Text() + rand.Text(), inst: inst, end: end,
		expires: time.Now().Add(is.lease())}
	m.work, m.endWork = context.WithCancel(life)
	is.mu.Lock()
	is.m[m.id] = m
	is.mu.Unlock()
	is.s.log().Info("agent: instance started", "id", m.id, "engine", req.Spec.Engine, "data_dir", req.Spec.DataDir, "runner", req.Runner)
	info := is.info(m)
	info.Password, info.Ticket = inst.Target().Password.Reveal(), m.ticket
	writeJSON(w, http.StatusCreated, info)
}

func (is *instances) info(m *managed) InstanceInfo {
	exited, _ := m.inst.Exited()
	return InstanceInfo{ID: m.id, Name: m.inst.Spec().InstanceName(), Runner: m.runner, URL: m.inst.Target().String(),
		Lease: is.lease(), Alive: !exited, Description: m.inst.Describe()}
}

func (is *instances) find(w http.ResponseWriter, r *http.Request) *managed {
	is.mu.Lock()
	m := is.m[r.PathValue("id")]
	is.mu.Unlock()
	if m == nil {
		fail(w, http.StatusNotFound, fmt.Errorf("no instance %q on this agent", r.PathValue("id")))
	}
	return m
}

func (is *instances) list(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	is.mu.Lock()
	ms := make([]*managed, 0, len(is.m))
	for _, m := range is.m {
		ms = append(ms, m)
	}
	is.mu.Unlock()
	out := make([]InstanceInfo, 0, len(ms))
	for _, m := range ms {
		out = append(out, is.info(m))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, out)
}

func (is *instances) get(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	if m := is.find(w, r); m != nil {
		writeJSON(w, http.StatusOK, is.info(m))
	}
}

func (is *instances) renew(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	is.mu.Lock()
	m.expires = time.Now().Add(is.lease())
	is.mu.Unlock()
	// No description: it would wait for a restart in progress (the
	// instance's lock), and the lease must not.
	writeJSON(w, http.StatusOK, struct {
		Lease time.Duration `json:"lease"`
	}{is.lease()})
}

func (is *instances) stop(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	if err := is.stopOne(r.Context(), m, "its runner asked"); err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// stopOne stops an instance and forgets it.
func (is *instances) stopOne(ctx context.Context, m *managed, why string) error {
	is.mu.Lock()
	if is.m[m.id] != m {
		is.mu.Unlock()
		return nil
	}
	delete(is.m, m.id)
	is.mu.Unlock()
	m.endWork()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	err := m.inst.Stop(sctx)
	m.end()
	is.removeBackups(m)
	is.removeRestored(m)
	is.s.log().Info("agent: instance stopped", "id", m.id, "why", why, "err", err)
	return err
}

// reap stops, every second until ctx ends, the instances whose runner
// stopped renewing their lease.
func (is *instances) reap(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			is.mu.Lock()
			var lapsed []*managed
			for _, m := range is.m {
				if now.After(m.expires) {
					lapsed = append(lapsed, m)
				}
			}
			is.mu.Unlock()
			for _, m := range lapsed {
				_ = is.stopOne(ctx, m, fmt.Sprintf("its runner %s said nothing for %s (lease lapsed)", m.runner, is.lease()))
			}
		}
	}
}

// stopAll stops every instance (the agent stops).
func (is *instances) stopAll(ctx context.Context, why string) {
	is.mu.Lock()
	ms := make([]*managed, 0, len(is.m))
	for _, m := range is.m {
		ms = append(ms, m)
	}
	is.mu.Unlock()
	for _, m := range ms {
		_ = is.stopOne(ctx, m, why)
	}
}

// Running is how many instances the agent holds.
func (s *Server) Running() int {
	s.init()
	s.inst.mu.Lock()
	defer s.inst.mu.Unlock()
	return len(s.inst.m)
}

// ticketOf returns the instance whose ticket tok is.
func (is *instances) ticketOf(tok string) string {
	is.mu.Lock()
	defer is.mu.Unlock()
	for id, m := range is.m {
		if sameSecret(tok, m.ticket) {
			return id
		}
	}
	return ""
}

// connect tunnels the request's connection to the instance's server on
// the agent's loopback: the server keeps listening on loopback only.
func (is *instances) connect(w http.ResponseWriter, r *http.Request) {
	m := is.find(w, r)
	if m == nil {
		return
	}
	if a := authOf(r.Context()); a != authToken && a != auth("ticket:"+m.id) {
		fail(w, http.StatusForbidden, errors.New("this ticket is not this instance's"))
		return
	}
	port := m.inst.Port()
	if port == 0 {
		fail(w, http.StatusConflict, errors.New("the instance has no server listening"))
		return
	}
	backend, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)), dialTimeout)
	if err != nil {
		fail(w, http.StatusBadGateway, fmt.Errorf("connect to the instance's server: %w", err))
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		backend.Close()
		fail(w, http.StatusInternalServerError, err)
		return
	}
	_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: oltplab-tunnel\r\n\r\n")
	// Bytes the client sent after the request are the database's.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		_, _ = backend.Write(b)
	}
	splice(conn, backend)
}

// splice copies both ways until either side closes, then closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
	a.Close()
	b.Close()
	<-done
}

// auth is who a request is: the agent's token, an instance's ticket, or
// nobody ("").
type auth string

const authToken auth = "token"

type authKey struct{}

func withAuth(ctx context.Context, a auth) context.Context {
	return context.WithValue(ctx, authKey{}, a)
}

func authOf(ctx context.Context) auth {
	a, _ := ctx.Value(authKey{}).(auth)
	return a
}

// authorized tells who presents the request's bearer.
func (s *Server) authorized(r *http.Request) auth {
	tok := bearer(r)
	if tok == "" || s.Token == "" {
		return ""
	}
	if sameSecret(tok, s.Token) {
		return authToken
	}
	if id := s.inst.ticketOf(tok); id != "" {
		return auth("ticket:" + id)
	}
	return ""
}

// authName is the log's word for who asked (never the secret).
func authName(a auth) string {
	if a == "" {
		return "none"
	}
	return string(a)
}
