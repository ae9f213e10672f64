package cli

import (
	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// scenarioEnv is the scenarios' view of this command: its store, logger,
// scrubber and version, with obs rendering progress.
func (a *app) scenarioEnv(st *store.Store, obs scenario.Observer) *scenario.Env {
	wait, _ := a.storeWait() // checked when the store was opened
	return &scenario.Env{Store: st, Log: a.log, Scrub: a.scrub, ToolVersion: version(), Observer: obs, StoreWait: wait,
		NoCrossCheck: a.noCrossCheck}
}
