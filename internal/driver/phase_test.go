package driver

import (
	"encoding/json"
	"testing"
)

// TestPhaseJSON: a live report's phase reads back as it was written (a
// remote driver's reports cross the wire), and an unknown one is refused.
func TestPhaseJSON(t *testing.T) {
	for _, p := range []Phase{PhaseRampup, PhaseMeasure, PhaseGrace, PhaseDone} {
		b, err := json.Marshal(Live{Phase: p})
		if err != nil {
			t.Fatal(err)
		}
		var l Live
		if err := json.Unmarshal(b, &l); err != nil || l.Phase != p {
			t.Errorf("%s: read back %s (%v)", p, l.Phase, err)
		}
	}
	var l Live
	if err := json.Unmarshal([]byte(`{"Phase":"warmup"}`), &l); err == nil {
		t.Errorf("an unknown phase was read as %s", l.Phase)
	}
}
