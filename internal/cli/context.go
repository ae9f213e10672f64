package cli

import (
	"encoding/json"

	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// scenarioEnv is the scenarios' view of this command: its store, logger,
// scrubber and version, with obs rendering progress.
func (a *app) scenarioEnv(st *store.Store, obs scenario.Observer) *scenario.Env {
	return &scenario.Env{Store: st, Log: a.log, Scrub: a.scrub, ToolVersion: version(), Observer: obs}
}

func mustJSON(v any) json.RawMessage { return scenario.JSON(v) }
