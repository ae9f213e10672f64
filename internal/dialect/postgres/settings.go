package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

// recordedSettings are the server settings recorded with every result.
// pg_settings hides those the user may not read (data_directory without
// pg_read_all_settings); they are left out.
var recordedSettings = []string{
	"shared_buffers", "synchronous_commit", "wal_sync_method", "fsync", "full_page_writes",
	"wal_level", "max_wal_size", "checkpoint_timeout", "max_connections", "effective_cache_size",
	"work_mem", "data_directory",
}

// DataDir is data_directory when the user may read it (superuser or
// pg_read_all_settings), else ""; whether that path is on this host is
// the caller's to decide.
func (d *Database) DataDir(ctx context.Context) (string, error) {
	s, err := d.Settings(ctx)
	return s["data_directory"], err
}

// Version is `SHOW server_version` followed by version().
func (d *Database) Version(ctx context.Context) (string, error) {
	var short, long string
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT current_setting('server_version'), version()").Scan(&short, &long)
	})
	if err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	return short + "; " + long, nil
}

// Settings returns the recorded settings in SHOW form ("256MB", "on").
func (d *Database) Settings(ctx context.Context) (map[string]string, error) {
	m := make(map[string]string, len(recordedSettings))
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx,
			"SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)", recordedSettings)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			m[k] = v
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read server settings: %w", err)
	}
	return m, nil
}

var _ dialect.ServerProcessReporter = (*Database)(nil)

// ServerProcess is the session's backend (pg_backend_pid()), whose
// parent, the postmaster, forked every process of the server.
func (d *Database) ServerProcess(ctx context.Context) (dialect.ServerProcess, error) {
	var pid int
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	})
	if err != nil {
		return dialect.ServerProcess{}, fmt.Errorf("read the backend's process id: %w", err)
	}
	return dialect.ServerProcess{PID: pid, Parent: true, Names: []string{"postgres", "postmaster"},
		How: "pg_backend_pid() and its parent, the postmaster"}, nil
}
