package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/oltplab/oltplab/internal/instance"
)

// The rebuild step's controls beside the data (the agent's token only):
//
//	POST /v1/instances/{id}/restart   RestartRequest -> RestartResponse:
//	     the server stopped and started again (same settings, port and
//	     password); cold syncs and drops the agent's host's page cache in
//	     between (instance.Instance.Restart), timed there
//	GET  /v1/instances/{id}/counters  Counters: the server's CPU time and
//	     block I/O so far, read from its cgroups on the agent's host
//
// Nothing else: the runner sends no command, only which of these.

// RestartRequest is one restart of an instance's server.
type RestartRequest struct {
	Cold bool `json:"cold"`
}

// RestartResponse is what the restart did, timed on the agent's host,
// and its error.
type RestartResponse struct {
	Report instance.RestartReport `json:"report"`
	Error  string                 `json:"error,omitempty"`
}

// Counters are an instance's server's counters on the agent's host; an
// error for each that could not be read.
type Counters struct {
	CPUSeconds float64                        `json:"cpu_seconds"`
	CPUError   string                         `json:"cpu_error,omitempty"`
	IO         map[string]instance.IOCounters `json:"io,omitempty"`
	IOError    string                         `json:"io_error,omitempty"`
}

func (is *instances) restartRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/instances/{id}/restart", is.restart)
	mux.HandleFunc("GET /v1/instances/{id}/counters", is.counters)
}

func (is *instances) restart(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	var req RestartRequest
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("restart request: %w", err))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(m.work, cancel)
	defer stop()
	rep, err := m.inst.Restart(ctx, req.Cold)
	is.s.log().Info("agent: restarted", "instance", m.id, "runner", m.runner, "cold", req.Cold,
		"cache_dropped", rep.CacheDropped, "stop_s", rep.StopSeconds, "start_s", rep.StartSeconds, "err", err)
	out := RestartResponse{Report: rep}
	if err != nil {
		out.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, out)
}

func (is *instances) counters(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	var c Counters
	var err error
	if c.CPUSeconds, err = m.inst.ServerCPUSeconds(); err != nil {
		c.CPUError = err.Error()
	}
	if c.IO, err = m.inst.IOCounters(); err != nil {
		c.IOError = err.Error()
	}
	writeJSON(w, http.StatusOK, c)
}

// Restart asks the agent to restart the instance's server (cold: with its
// host's page cache dropped in between); the report is timed there.
func (c Client) Restart(ctx context.Context, id string, cold bool) (instance.RestartReport, error) {
	var out RestartResponse
	if err := c.do(ctx, http.MethodPost, "/v1/instances/"+id+"/restart", RestartRequest{Cold: cold}, &out, 0); err != nil {
		var re *RemoteError
		if !errors.As(err, &re) && ctx.Err() == nil && !errors.Is(err, ErrUnreachable) {
			err = fmt.Errorf("%w at %s during the restart: %w", ErrUnreachable, c.Addr, err)
		}
		return out.Report, err
	}
	if out.Error != "" {
		return out.Report, fmt.Errorf("on the agent at %s: %s", c.Addr, out.Error)
	}
	return out.Report, nil
}

// Counters reads the instance's server's CPU time and I/O on the agent's
// host.
func (c Client) Counters(ctx context.Context, id string) (Counters, error) {
	var out Counters
	err := c.do(ctx, http.MethodGet, "/v1/instances/"+id+"/counters", nil, &out, time.Minute)
	return out, err
}
