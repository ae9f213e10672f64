package cli

import (
	"encoding/json"
	"sort"

	"github.com/oltplab/oltplab/internal/scenario"
	"github.com/oltplab/oltplab/internal/store"
)

// scenarioEnv is the scenarios' view of this command: its store, logger,
// scrubber and version, with obs rendering progress.
func (a *app) scenarioEnv(st *store.Store, obs scenario.Observer) *scenario.Env {
	return &scenario.Env{Store: st, Log: a.log, Scrub: a.scrub, ToolVersion: version(), Observer: obs}
}

func mustJSON(v any) json.RawMessage { return scenario.JSON(v) }

// flatten turns nested JSON into dotted keys with string values, for
// context tables and differences between profiles.
func flatten(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x[k])
			}
		case nil:
		case string:
			out[prefix] = x
		default:
			b, _ := json.Marshal(x)
			out[prefix] = string(b)
		}
	}
	walk("", v)
	return out
}
