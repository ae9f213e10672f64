package sqlite

import (
	"context"
	"database/sql"
	"os"
	"strconv"
)

// Version implements dialect.Database: "SQLite 3.x.y", the library
// compiled into the driver. It needs no database file.
func (d *Database) Version(ctx context.Context) (string, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return "", d.wrap("read version", err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		return "", d.wrap("read version", err)
	}
	return "SQLite " + v, nil
}

// synchronousNames are the values of PRAGMA synchronous.
var synchronousNames = []string{"off", "normal", "full", "extra"}

// Settings implements dialect.Database: the pragmas of a run connection,
// the file and its size (plus the WAL's). Before build created the file it
// reports the file as absent and the settings connections will use.
func (d *Database) Settings(ctx context.Context) (map[string]string, error) {
	const op = "read settings"
	m := map[string]string{
		"file":     d.path,
		"driver":   "modernc.org/sqlite (pure Go)",
		"txlock":   "immediate (read-only transactions deferred)",
		"time_fmt": "text YYYY-MM-DD HH:MM:SS",
	}
	ok, err := d.fileExists()
	if err != nil {
		return nil, err
	}
	if !ok {
		m["file_size_bytes"] = "0 (absent)"
		m["journal_mode"] = "wal"
		m["synchronous"] = runSynchronous
		m["busy_timeout"] = strconv.Itoa(busyTimeoutMillis)
		return m, nil
	}
	c, err := d.conn(ctx, op)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	for _, p := range []string{"journal_mode", "synchronous", "page_size", "cache_size",
		"busy_timeout", "foreign_keys", "mmap_size", "wal_autocheckpoint", "page_count", "freelist_count"} {
		var v string
		if err := c.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			return nil, d.wrap(op+": "+p, err)
		}
		if p == "synchronous" {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(synchronousNames) {
				v = synchronousNames[n]
			}
		}
		m[p] = v
	}
	if fi, err := os.Stat(d.path); err == nil {
		m["file_size_bytes"] = strconv.FormatInt(fi.Size(), 10)
	}
	if fi, err := os.Stat(d.path + "-wal"); err == nil {
		m["wal_size_bytes"] = strconv.FormatInt(fi.Size(), 10)
	}
	return m, nil
}
