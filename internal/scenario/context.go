package scenario

import (
	"context"
	"runtime"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/sysstat"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// RunContext is what every stored result carries besides its parameters:
// the host, the storage under the database when it is local, the database
// version and key settings, the schema and the tool.
type RunContext struct {
	Host sysstat.Host `json:"host"`
	// Placement says whether the database runs on the host measured
	// above; when it does not, host figures are the load generator's.
	Placement Placement       `json:"placement"`
	Storage   *sysstat.Device `json:"storage,omitempty"`
	Database  DatabaseContext `json:"database"`
	Schema    *tpcc.Meta      `json:"schema,omitempty"`
	Tool      ToolContext     `json:"tool"`
	// Instance describes the managed instance measured (nil for a
	// database oltplab did not start).
	Instance any `json:"instance,omitempty"`
	// Experiment places the measurement in an experiment (nil outside one).
	Experiment *ExperimentContext `json:"experiment,omitempty"`
	// Calibration is the newest CPU calibration (`oltplab cpu`) of this
	// host, so that results compare across processor generations.
	Calibration *Calibration      `json:"calibration,omitempty"`
	Notes       map[string]string `json:"notes,omitempty"`

	// dataDir holds the database's files when they are on this host (the
	// database says where, as a dialect.DataDirer): the sampler watches
	// the device under it.
	dataDir string
}

// DataDir is the directory of the database's files when they are on this
// host, else "".
func (c RunContext) DataDir() string { return c.dataDir }

// DatabaseContext describes the database a result was measured on.
type DatabaseContext struct {
	Dialect  string            `json:"dialect"`
	Target   string            `json:"target"`
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

// ToolContext describes oltplab itself.
type ToolContext struct {
	Version    string `json:"version"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// GatherContext describes where a measurement happens. Missing pieces are
// noted, never fatal: a result without its context is still a result. db
// may be nil (a monitor without a target).
func (e *Env) GatherContext(ctx context.Context, db dialect.Database, tg dialect.Target, meta *tpcc.Meta) RunContext {
	c := RunContext{
		Tool: ToolContext{Version: e.ToolVersion, GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
			GOMAXPROCS: runtime.GOMAXPROCS(0)},
		Database:   DatabaseContext{Target: tg.String()},
		Schema:     meta,
		Instance:   e.Instance,
		Experiment: e.Experiment,
		Notes:      map[string]string{},
	}
	host, err := sysstat.ReadHost()
	if err != nil {
		c.Notes["host"] = err.Error()
	}
	c.Host = host
	if cal, err := e.latestCalibration(ctx, host); err != nil {
		c.Notes["calibration"] = err.Error()
	} else {
		c.Calibration = cal
	}
	c.Placement = Place(ctx, tg, e.IsLocalAddress)
	c.Placement.Agent = e.Agent.Addr
	if e.Hosts != nil {
		h := *e.Hosts
		c.Placement.Hosts = &h
		if h.Database != "here" {
			c.Placement.Local = false
			c.Placement.Address = h.DatabaseAgent
			c.Placement.Why = "the plan places the database on host " + h.Database + " (oltplab agent at " + h.DatabaseAgent + "), reached through that agent"
		}
	}
	if db != nil {
		c.Database.Dialect = db.Name()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if v, err := db.Version(cctx); err == nil {
			c.Database.Version = v
		} else {
			c.Notes["database_version"] = e.scrub(err.Error())
		}
		if s, err := db.Settings(cctx); err == nil {
			c.Database.Settings = s
		} else {
			c.Notes["database_settings"] = e.scrub(err.Error())
		}
		// The storage under the database, when it lives on this host.
		if dd, ok := db.(dialect.DataDirer); ok && c.Placement.Local {
			if dir, err := dd.DataDir(cctx); err != nil {
				c.Notes["storage"] = e.scrub(err.Error())
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

// LocalDataDir is the directory of db's files when the database runs on
// this host and can say where they are (a dialect.DataDirer), else "".
func (e *Env) LocalDataDir(ctx context.Context, db dialect.Database, tg dialect.Target) string {
	dd, ok := db.(dialect.DataDirer)
	if !ok || !Place(ctx, tg, e.IsLocalAddress).Local {
		return ""
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dir, err := dd.DataDir(cctx)
	if err != nil {
		return ""
	}
	return dir
}
