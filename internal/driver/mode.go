package driver

import "fmt"

// Mode is how a run paces its users. The two modes measure different
// things and their figures are labelled apart: only a conforming tpc-c run
// may call its New-Order rate tpmC.
type Mode int

const (
	// ModeTPROCC is HammerDB's TPROC-C style: virtual users, each with its
	// own session, run transactions back to back (no keying or think
	// time), or at a fixed rate each (Options.Rate). It finds a server's
	// ceiling; its figures are NOPM and TPM.
	ModeTPROCC Mode = iota
	// ModeTPCC is the specification's pacing: ten terminals per warehouse,
	// each keying and thinking (TPC-C 5.2.5) between transactions, sharing
	// a pool of sessions, with Delivery deferred (2.7.2) and the
	// response-time constraints checked. Its figure is tpmC.
	ModeTPCC
)

var modeNames = [...]string{ModeTPROCC: "tproc-c", ModeTPCC: "tpc-c"}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("mode(%d)", int(m))
	}
	return modeNames[m]
}

// MarshalText writes the mode by name.
func (m Mode) MarshalText() ([]byte, error) {
	if m < 0 || int(m) >= len(modeNames) {
		return nil, fmt.Errorf("unknown mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a mode by name: tproc-c or tpc-c.
func (m *Mode) UnmarshalText(b []byte) error {
	for i, n := range modeNames {
		if string(b) == n {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("unknown mode %q (want tproc-c or tpc-c)", b)
}
