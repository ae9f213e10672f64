package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// The driver's placement (the agent's token only):
//
//	POST /v1/drive  DriveRequest -> DriveResponse: one timed run of the
//	                driver on this host, against a database reached
//	                directly (a URL; an instance of this agent) or through
//	                another agent's tunnel (Via); with Live, a stream of
//	                DriveEvent lines instead (newline-delimited JSON): the
//	                driver's live reports as they come (driver.Live, every
//	                second), then the response
//	POST /v1/rtt    Via -> RTTResponse: the round trip from this host to
//	                another agent, measured now
//
// The run ends when the runner hangs up: its request's context is the
// run's.

// Via is another agent's instance, reached through that agent's tunnel
// with the instance's ticket (never that agent's token).
type Via struct {
	Addr        string `json:"addr"`
	Fingerprint string `json:"fingerprint"`
	Ticket      string `json:"ticket"`
	Instance    string `json:"instance"`
}

func (v Via) client() Client {
	return Client{Addr: v.Addr, Fingerprint: v.Fingerprint, Token: v.Ticket}
}

// DriveRequest is one run of the driver.
type DriveRequest struct {
	// URL is the database, without its password: on this agent's host
	// (an instance of its own, an external server it can reach), or on
	// Via's host (then only its scheme, user and database count).
	URL      string `json:"url"`
	Password string `json:"password,omitempty"`
	Via      *Via   `json:"via,omitempty"`
	Meta     tpcc.Meta
	Options  driver.Options `json:"options"`
	// Live asks for the driver's live reports as they come (a stream of
	// DriveEvent lines) rather than one answer at the end.
	Live bool `json:"live,omitempty"`
}

// DriveEvent is one line of a driven run's stream; one field set.
type DriveEvent struct {
	Live *driver.Live   `json:"live,omitempty"`
	End  *DriveResponse `json:"end,omitempty"`
}

// DriveResponse is what the run measured, and its error.
type DriveResponse struct {
	Wire  *driver.Wire `json:"wire,omitempty"`
	Error string       `json:"error,omitempty"`
}

// RTTResponse is a measured round trip.
type RTTResponse struct {
	RTT time.Duration `json:"rtt"`
}

func (s *Server) driveRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/drive", s.drive)
	mux.HandleFunc("POST /v1/rtt", s.rtt)
}

func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *Server) rtt(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	var v Via
	if err := decodeStrict(r, &v); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	d, err := v.client().RTT(r.Context(), 5)
	if err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, http.StatusOK, RTTResponse{RTT: d})
}

func (s *Server) drive(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	var req DriveRequest
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("drive request: %w", err))
		return
	}
	secret := dialect.Secret(req.Password)
	u, err := url.Parse(req.URL)
	if err != nil || u.Scheme == "sqlite" {
		fail(w, http.StatusBadRequest, fmt.Errorf("drive request: want the URL of a database server"))
		return
	}
	if req.Via != nil {
		f, err := req.Via.client().Forward(req.Via.Instance)
		if err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		defer f.Close()
		u.Host = f.Addr()
	}
	tg, err := dialect.ParseTarget(u.String(), "")
	if err != nil {
		fail(w, http.StatusBadRequest, errors.New(dialect.Scrub(err.Error(), secret)))
		return
	}
	tg.Password, tg.PasswordSet = secret, req.Password != ""
	tg.Env = dialect.Env{Logger: s.log()}
	ctx := r.Context()
	s.log().Info("agent: driving", "target", tg.String(), "vus", req.Options.Users(), "duration", req.Options.Duration, "via", viaAddr(req.Via), "live", req.Live)
	answer := func(out DriveResponse) { writeJSON(w, http.StatusOK, out) }
	var live func(driver.Live)
	if req.Live {
		flusher, ok := w.(http.Flusher)
		if !ok {
			fail(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		var mu sync.Mutex
		send := func(e DriveEvent) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(e) // a runner gone ends ctx: the run stops
			flusher.Flush()
		}
		live = func(l driver.Live) { send(DriveEvent{Live: &l}) }
		answer = func(out DriveResponse) { send(DriveEvent{End: &out}) }
	}
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		answer(DriveResponse{Error: dialect.Scrub("open the database: "+err.Error(), secret)})
		return
	}
	defer db.Close()
	res, rerr := driver.Run(ctx, db, req.Meta, req.Options, live)
	var out DriveResponse
	if res != nil {
		wire := res.ToWire()
		out.Wire = &wire
	}
	if rerr != nil {
		out.Error = dialect.Scrub(rerr.Error(), secret)
	}
	answer(out)
}

func viaAddr(v *Via) string {
	if v == nil {
		return ""
	}
	return v.Addr
}

// ErrRemoteRun is wrapped by the error of a run the remote driver
// reported (its own words), as opposed to an agent gone.
var ErrRemoteRun = errors.New("the driver on the agent's host")

// Drive runs the driver on the agent's host and returns what it
// measured; live, when not nil, is called with the driver's live reports
// there as they arrive (as driver.Run calls it, from one goroutine). An
// agent that goes away during the run is ErrUnreachable.
func (c Client) Drive(ctx context.Context, req DriveRequest, live func(driver.Live)) (*driver.Result, error) {
	var out DriveResponse
	var err error
	if live != nil {
		req.Live = true
		out, err = c.driveStream(ctx, req, live)
	} else {
		err = c.do(ctx, http.MethodPost, "/v1/drive", req, &out, 0)
	}
	if err != nil {
		var ne net.Error
		if !errors.Is(err, ErrUnreachable) && (errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)) {
			return nil, fmt.Errorf("%w at %s during the run: %w", ErrUnreachable, c.Addr, err)
		}
		return nil, err
	}
	var res *driver.Result
	if out.Wire != nil {
		r, err := out.Wire.FromWire()
		if err != nil {
			return nil, err
		}
		res = r
	}
	if out.Error != "" {
		return res, fmt.Errorf("%w at %s: %s", ErrRemoteRun, c.Addr, out.Error)
	}
	return res, nil
}

// driveStream sends a live run's request and follows its stream: each
// live report to live, the response at its end.
func (c Client) driveStream(ctx context.Context, req DriveRequest, live func(driver.Live)) (DriveResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return DriveResponse{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+c.Addr+"/v1/drive", bytes.NewReader(b))
	if err != nil {
		return DriveResponse{}, fmt.Errorf("agent at %s: %w", c.Addr, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	c.authorize(hr)
	hc, err := c.httpClient(0)
	if err != nil {
		return DriveResponse{}, err
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return DriveResponse{}, ctx.Err()
		}
		if errors.Is(err, ErrTrust) {
			return DriveResponse{}, fmt.Errorf("agent at %s: %w", c.Addr, err)
		}
		return DriveResponse{}, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e apiError
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return DriveResponse{}, &RemoteError{Addr: c.Addr, Status: resp.StatusCode, Msg: e.Error}
	}
	sc := bufio.NewScanner(resp.Body)
	// The end holds the whole result (histograms, per-second series).
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var e DriveEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return DriveResponse{}, fmt.Errorf("agent at %s: driver stream: %w", c.Addr, err)
		}
		switch {
		case e.End != nil:
			return *e.End, nil
		case e.Live != nil:
			live(*e.Live)
		}
	}
	if ctx.Err() != nil {
		return DriveResponse{}, ctx.Err()
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return DriveResponse{}, fmt.Errorf("%w at %s during the run: the stream ended without the result: %w", ErrUnreachable, c.Addr, err)
}

// RTTTo asks the agent for the round trip from its host to another
// agent (v).
func (c Client) RTTTo(ctx context.Context, v Via) (time.Duration, error) {
	var out RTTResponse
	err := c.do(ctx, http.MethodPost, "/v1/rtt", v, &out, time.Minute)
	return out.RTT, err
}
