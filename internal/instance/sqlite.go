package instance

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/oltplab/oltplab/internal/dialect"
)

// sqliteEngine is embedded SQLite: nothing to start. The instance names a
// database file in DataDir and passes Memory as the page cache of every
// run connection (the target's cache_size parameter).
type sqliteEngine struct{}

// SQLiteFile is the database file of an embedded instance, in DataDir.
const SQLiteFile = "tpcc.db"

func (sqliteEngine) server() bool               { return false }
func (sqliteEngine) settingKey(k string) string { return k }
func (sqliteEngine) refused(string, string) (string, refusal, bool) {
	return "", refusal{}, false // an embedded engine takes no settings (Validate)
}
func (sqliteEngine) locate(string) (Binaries, error) { return Binaries{}, nil }
func (sqliteEngine) osUser() string                  { return "" }
func (sqliteEngine) initialised(*Instance) (bool, error) {
	return true, nil
}
func (sqliteEngine) initialise(context.Context, *Instance) error { return nil }
func (sqliteEngine) prepare(*Instance) ([]string, error)         { return nil, nil }
func (sqliteEngine) stopSignal() syscall.Signal                  { return 0 }
func (sqliteEngine) deathSignal() syscall.Signal                 { return 0 }
func (sqliteEngine) ready(context.Context, *Instance) (map[string]string, error) {
	return nil, nil
}
func (sqliteEngine) memorySetting() string { return "cache_size (per connection; mmap off)" }
func (sqliteEngine) ioLimitNote() string   { return "" }

func (sqliteEngine) settings(i *Instance) []setting {
	s := []setting{{"file", filepath.Join(i.dataDir, SQLiteFile)}}
	if i.spec.Memory > 0 {
		s = append(s, setting{"cache_size", sqliteCacheSize(i.spec.Memory)})
	}
	return s
}

// sqliteCacheSize is PRAGMA cache_size for a size: negative means KiB.
func sqliteCacheSize(m Size) string { return "-" + strconv.FormatInt(m.Bytes()/1024, 10) }

func (sqliteEngine) scheme() string { return "sqlite" }

func (sqliteEngine) target(i *Instance) dialect.Target {
	u := &url.URL{Scheme: "sqlite", Path: filepath.Join(i.dataDir, SQLiteFile), OmitHost: true}
	if i.spec.Memory > 0 {
		u.RawQuery = "cache_size=" + sqliteCacheSize(i.spec.Memory)
	}
	return dialect.Target{Scheme: "sqlite", URL: u}
}
