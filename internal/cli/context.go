package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
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
	}
	// The storage under the database, when it lives on this host.
	if dir := localDataDir(tg, c.Database.Settings); dir != "" {
		if d, err := sysstat.DeviceOf(dir); err == nil {
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

// localDataDir is the directory holding the database files when the
// database runs on this host: the SQLite file's directory, or the server's
// reported data directory when the target is on loopback.
func localDataDir(tg dialect.Target, settings map[string]string) string {
	if tg.URL == nil {
		return "" // no target (monitor samples the host alone)
	}
	if tg.Scheme == "sqlite" {
		p := tg.URL.Opaque
		if p == "" {
			p = tg.URL.Path
		}
		if abs, err := filepath.Abs(p); err == nil {
			return filepath.Dir(abs)
		}
		return ""
	}
	host := tg.URL.Hostname()
	if host != "127.0.0.1" && host != "localhost" && host != "::1" && host != "" {
		return ""
	}
	for _, k := range []string{"data_directory", "datadir"} {
		if d := settings[k]; d != "" {
			return d
		}
	}
	return ""
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
