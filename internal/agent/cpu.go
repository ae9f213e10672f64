package agent

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sysstat"
)

// The cpu step's client loop beside the data (the agent's token only):
//
//	POST /v1/cpu  CPULoopRequest -> CPULoop: oltplab's calibration loop
//	              (dialect.CalibrationWork) on one locked OS thread of the
//	              agent, timed there, with the host it ran on
//
// The loop is fixed (only its rounds are asked) and bounded by
// MaxCPULoopIterations: it cannot be interrupted once started.

// MaxCPULoopIterations bounds a loop an agent runs: about 20 s on the
// 2-core test VM (205 M rounds per CPU second), ten times the default.
const MaxCPULoopIterations = 4_000_000_000

// CPULoopRequest is one run of the client loop.
type CPULoopRequest struct {
	Iterations int64 `json:"iterations"`
}

// CPULoop is one run of the client loop on the agent's host.
type CPULoop struct {
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// CPUSeconds is the thread's CPU time; nil when the host does not
	// report it.
	CPUSeconds *float64     `json:"cpu_seconds,omitempty"`
	X          int64        `json:"x"`
	S          string       `json:"s"`
	Host       sysstat.Host `json:"host"`
}

func (s *Server) cpuRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/cpu", s.cpuLoop)
}

func (s *Server) cpuLoop(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	var req CPULoopRequest
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("cpu request: %w", err))
		return
	}
	if req.Iterations < 1 || req.Iterations > MaxCPULoopIterations {
		fail(w, http.StatusBadRequest, fmt.Errorf("cpu request: iterations %d: want 1 to %d", req.Iterations, int64(MaxCPULoopIterations)))
		return
	}
	out := CPULoop{}
	host, err := s.fs().Host()
	if err != nil {
		s.log().Warn("agent: describe the host", "err", err)
	}
	out.Host = host
	s.log().Info("agent: cpu loop", "iterations", req.Iterations)
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0, ok := sysstat.ThreadCPUTime()
		out.Started = time.Now()
		out.X, out.S = dialect.CalibrationWork(req.Iterations)
		out.Ended = time.Now()
		cpu1, _ := sysstat.ThreadCPUTime()
		if ok {
			c := (cpu1 - cpu0).Seconds()
			out.CPUSeconds = &c
		}
	}()
	writeJSON(w, http.StatusOK, out)
}

// CPULoop runs the client calibration loop on the agent's host.
func (c Client) CPULoop(ctx context.Context, iterations int64) (CPULoop, error) {
	var out CPULoop
	err := c.do(ctx, http.MethodPost, "/v1/cpu", CPULoopRequest{Iterations: iterations}, &out, 0)
	return out, err
}
