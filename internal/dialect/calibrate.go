package dialect

import "context"

// CPUCalibrator is implemented by a Database that can run oltplab's CPU
// calibration work inside the server: a fixed, deterministic,
// single-threaded loop (CalibrationWork) timed by the server's own clock,
// so that the network does not count. Its rate, with the same loop run in
// the client, lets processor generations and hosts be compared
// (`oltplab cpu`, METHODOLOGY experiment 11).
//
// The loop must leave nothing behind in the database and needs no TPC-C
// schema.
type CPUCalibrator interface {
	// CalibrateCPU runs iterations rounds of CalibrationWork in one
	// server call and returns the server's timing and the checksum.
	CalibrateCPU(ctx context.Context, iterations int64) (Calibration, error)
	// CalibrationIterations is the default number of rounds (a few
	// seconds on one current core) and the most the loop can run.
	CalibrationIterations() (standard, most int64)
}

// Calibration is one timed run of the calibration loop.
type Calibration struct {
	Iterations int64 `json:"iterations"`
	// Seconds is the loop's duration by the clock of whoever ran it (the
	// server's clock around the loop, inside the server).
	Seconds float64 `json:"seconds"`
	// X and S are the loop's final state: equal to CalibrationWork's for
	// the same iterations, or the loop did other work.
	X int64  `json:"x"`
	S string `json:"s"`
	// Method names the loop's form ("PL/pgSQL loop in a temporary
	// function", "SQL/PSM procedure", "recursive CTE").
	Method string `json:"method"`
}

// Rate is iterations per second (0 when no time was measured).
func (c Calibration) Rate() float64 {
	if c.Seconds <= 0 {
		return 0
	}
	return float64(c.Iterations) / c.Seconds
}

// CalibrationModulus bounds the calibration's integer state.
const CalibrationModulus = 1000003

// CalibrationTail is the length of the calibration's string state.
const CalibrationTail = 16

// CalibrationWork is the reference of the calibration loop, the work
// every dialect's server loop repeats and the client loop times. Starting
// from x = 0 and s = "", round i (1 ≤ i ≤ n) does
//
//	x = (x*31 + i) mod 1000003
//	s = the last 16 characters of s followed by the letter 'A' + x mod 26
//
// and the final (x, s) is the checksum: one integer multiply-add-modulo
// and one string append and cut per round, the same in every engine.
func CalibrationWork(n int64) (x int64, s string) {
	var buf [CalibrationTail]byte // ring of the last letters
	var used int
	for i := int64(1); i <= n; i++ {
		x = (x*31 + i) % CalibrationModulus
		buf[i%CalibrationTail] = byte('A' + x%26)
		if used < CalibrationTail {
			used++
		}
	}
	out := make([]byte, used)
	for k := range used {
		// The oldest of the last `used` letters is round n-used+1.
		out[k] = buf[(n-int64(used)+1+int64(k))%CalibrationTail]
	}
	return x, string(out)
}
