package summary

import (
	"strconv"

	"github.com/oltplab/oltplab/internal/profile"
)

// CPU is what a CPU calibration (kind cpu) stores as its summary.
type CPU struct {
	// Work describes the loop, the same in the server and the client.
	Work string `json:"work"`
	// Server is the loop inside the database server (nil without a
	// database); Client the loop in oltplab, on the host oltplab runs on.
	Server      *CPUSide `json:"server,omitempty"`
	Client      CPUSide  `json:"client"`
	Interrupted bool     `json:"interrupted,omitempty"`
	Monitor     Monitor  `json:"monitor"`
}

// CPUSide is the loop run several times in one place.
type CPUSide struct {
	Method     string   `json:"method"`
	Iterations int64    `json:"iterations"`
	Runs       []CPURun `json:"runs"`
	// Rate is the spread of iterations per second (wall clock) over the
	// runs; CPURate of iterations per CPU second of the thread that ran
	// the loop, where that is known (the client): on a busy host it
	// stays what the processor does while Rate falls.
	Rate    profile.Summary  `json:"rate"`
	CPURate *profile.Summary `json:"cpu_rate,omitempty"`
	// CPUSource says whose CPU time CPURate divides by ("" when there
	// is none).
	CPUSource string `json:"cpu_source,omitempty"`
}

// CPURun is one timed run of the loop.
type CPURun struct {
	Repeat     int      `json:"repeat"`
	Seconds    float64  `json:"seconds"`
	CPUSeconds *float64 `json:"cpu_seconds,omitempty"`
	Rate       float64  `json:"rate"`
	// X and S are the loop's checksum, checked against
	// dialect.CalibrationWork.
	X      int64  `json:"x"`
	S      string `json:"s"`
	Window Span   `json:"window"`
}

// Headline is the calibration's mean rates: the server's loop, when it
// ran, and the client's.
func (s CPU) Headline() string {
	if len(s.Client.Runs) == 0 {
		return ""
	}
	h := "client " + FormatRate(s.Client.Rate.Mean) + " rounds/s"
	if s.Server != nil && len(s.Server.Runs) > 0 {
		h = "server " + FormatRate(s.Server.Rate.Mean) + " rounds/s, " + h
	}
	return h
}

// Sampling is what the host sampler saw over the calibration.
func (s CPU) Sampling() *Monitor { return &s.Monitor }

// FormatRate prints rounds per second in millions or thousands.
func FormatRate(r float64) string {
	switch {
	case r >= 1e6:
		return strconv.FormatFloat(r/1e6, 'f', 2, 64) + " M"
	case r >= 1e3:
		return strconv.FormatFloat(r/1e3, 'f', 1, 64) + " k"
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}
