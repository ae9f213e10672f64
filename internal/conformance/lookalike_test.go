package conformance_test

import (
	"github.com/oltplab/oltplab/internal/conformance"
	"github.com/oltplab/oltplab/internal/dbtest"
)

// lookAlikes hands dbtest's look-alikes of a baseline copy to the suite.
func lookAlikes(ls []dbtest.LookAlike) []conformance.LookAlike {
	out := make([]conformance.LookAlike, len(ls))
	for i, l := range ls {
		out[i] = conformance.LookAlike(l)
	}
	return out
}
