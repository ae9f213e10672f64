package cli

import (
	"encoding/json"
	"fmt"

	"github.com/oltplab/oltplab/internal/driver"
)

// runSummaryVersion is the version of the run summary format that this
// oltplab writes. Fields are only ever added, and an old summary decodes
// into today's types; a change that an older reader would misread (a
// field renamed, a unit changed) takes the next version, and
// decodeRunSummary converts the older ones. Version 0 is the format
// written before the version was recorded: the same as version 1 without
// driver.Result.EmbeddedDatabase. testdata/run-summary-v*.json keep one
// summary of each version, decoded by TestDecodeRunSummary.
const runSummaryVersion = 1

// runSummary is what a run stores as its summary: the driver's result and,
// beside it, what the samplers saw in the measured window.
type runSummary struct {
	Version int `json:"summary_version"`
	*driver.Result
	Monitor *monitorSummary `json:"monitor,omitempty"`
}

// decodeRunSummary reads a stored run summary of any version up to
// runSummaryVersion; a newer one, written by a newer oltplab, is refused
// rather than misread.
func decodeRunSummary(raw []byte) (runSummary, error) {
	s := runSummary{Result: &driver.Result{}}
	if err := json.Unmarshal(raw, &s); err != nil {
		return runSummary{}, err
	}
	if s.Version > runSummaryVersion {
		return runSummary{}, fmt.Errorf("run summary of format %d, written by a newer oltplab (this one reads up to %d)",
			s.Version, runSummaryVersion)
	}
	return s, nil
}
