package summary

import (
	"strings"
	"testing"
)

// TestNeighboursHeadline: the headline leads with what the scenario
// exists for (the victims while the backups ran), says a negative loss
// as a gain, and does not print an interval too wide to mean anything
// (issue 28: "victims' NOPM loss against the baseline: fast -111.4%
// (-666.0% to -11.7%)" came before "while backups ran: fast 51.7%").
func TestNeighboursHeadline(t *testing.T) {
	s := Neighbours{
		Phases:     []NeighbourPhase{{Name: PhaseBaseline}, {Name: PhaseNoisy}},
		Losses:     []VictimLoss{{Name: "fast", NOPMLossPct: -111.4, NOPMLo: -666.0, NOPMHi: -11.7, HasCI: true, Significant: true}},
		WhileNoisy: []WhileNoisy{{Name: "fast", NOPMLossPct: 51.7, NOPMLo: 22.9, NOPMHi: 73.2, HasCI: true, Significant: true}},
	}
	got := s.Headline()
	if want := "victims' NOPM while backups ran: fast lost 51.7% (22.9% to 73.2%); "; !strings.HasPrefix(got, want) {
		t.Errorf("Headline() = %q, want it to start with %q", got, want)
	}
	if want := "against the baseline phase: fast gained 111.4% (interval too wide to conclude)"; !strings.Contains(got, want) {
		t.Errorf("Headline() = %q, want it to contain %q", got, want)
	}
	for _, bad := range []string{"-666", "-111"} {
		if strings.Contains(got, bad) {
			t.Errorf("Headline() = %q, want no %q", got, bad)
		}
	}
}
