package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// runContext is what every stored result carries besides its parameters:
// the host, the storage under the database when it is local, the database
// version and key settings, the schema and the tool.
type runContext struct {
	Host     sysstat.Host      `json:"host"`
	Storage  *sysstat.Device   `json:"storage,omitempty"`
	Database databaseContext   `json:"database"`
	Schema   *tpcc.Meta        `json:"schema,omitempty"`
	Tool     toolContext       `json:"tool"`
	Notes    map[string]string `json:"notes,omitempty"`

	// dataDir is the directory of the database files when they are on
	// this host: its device is sampled during the run.
	dataDir string
}

type databaseContext struct {
	Dialect  string            `json:"dialect"`
	Target   string            `json:"target"`
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

type toolContext struct {
	Version    string `json:"version"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// gatherContext describes where a measurement happens. Missing pieces are
// noted, never fatal: a result without its context is still a result.
func (a *app) gatherContext(ctx context.Context, db dialect.Database, tg dialect.Target, meta *tpcc.Meta) runContext {
	c := runContext{
		Tool: toolContext{Version: version(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
			GOMAXPROCS: runtime.GOMAXPROCS(0)},
		Database: databaseContext{Target: tg.String()},
		Schema:   meta,
		Notes:    map[string]string{},
	}
	host, err := sysstat.ReadHost()
	if err != nil {
		c.Notes["host"] = err.Error()
	}
	c.Host = host
	if db != nil {
		c.Database.Dialect = db.Name()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if v, err := db.Version(cctx); err == nil {
			c.Database.Version = v
		} else {
			c.Notes["database_version"] = a.scrub(err.Error())
		}
		if s, err := db.Settings(cctx); err == nil {
			c.Database.Settings = s
		} else {
			c.Notes["database_settings"] = a.scrub(err.Error())
		}
		// The storage under the database, when it lives on this host.
		if dd, ok := db.(dialect.DataDirer); ok {
			if dir, err := dd.DataDir(cctx); err != nil {
				c.Notes["storage"] = a.scrub(err.Error())
			} else {
				c.dataDir = dir
			}
		}
	}
	if tg.Env.PlainSockets {
		c.Notes["sockets"] = "plain: raw-syscall session sockets turned off (OLTPLAB_RAWCONN=off)"
	}
	if c.dataDir != "" {
		if d, err := sysstat.DeviceOf(c.dataDir); err == nil {
			c.Storage = &d
		} else {
			c.Notes["storage"] = err.Error()
		}
	}
	if len(c.Notes) == 0 {
		c.Notes = nil
	}
	return c
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("{%q:%q}", "error", err.Error()))
	}
	return b
}

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
