package mysql

import (
	"context"

	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

var _ dialect.DataDirer = (*DB)(nil)

// settingNames are the server variables recorded with every result, as
// named in results. Both products' spellings are listed in settingAliases.
var settingNames = []string{
	"innodb_buffer_pool_size",
	"innodb_flush_log_at_trx_commit",
	"innodb_flush_method",
	"innodb_log_file_size",
	"innodb_redo_log_capacity", // MySQL 8.0.30+
	"innodb_doublewrite",
	"sync_binlog",
	"log_bin",
	"transaction_isolation",
	"max_connections",
	"datadir",
}

// settingAliases maps a server's variable name to the recorded one:
// MariaDB before 11.1 calls the isolation level tx_isolation, MySQL 8
// transaction_isolation.
var settingAliases = map[string]string{"tx_isolation": "transaction_isolation"}

// DataDir is the server's datadir; whether that path is on this host is
// the caller's to decide.
func (d *DB) DataDir(ctx context.Context) (string, error) {
	s, err := d.Settings(ctx)
	return s["datadir"], err
}

// Version is VERSION() and @@version_comment, e.g.
// "10.11.19-MariaDB-0+deb12u1 (Debian 12)".
func (d *DB) Version(ctx context.Context) (string, error) {
	var version, comment string
	if err := d.db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment").Scan(&version, &comment); err != nil {
		return "", d.wrap("read server version", err)
	}
	if comment == "" {
		return version, nil
	}
	return version + " (" + comment + ")", nil
}

// Settings returns the key InnoDB, binary log and connection settings.
func (d *DB) Settings(ctx context.Context) (map[string]string, error) {
	names := make([]string, 0, len(settingNames)+len(settingAliases))
	for _, n := range settingNames {
		names = append(names, "'"+n+"'")
	}
	for n := range settingAliases {
		names = append(names, "'"+n+"'")
	}
	rows, err := d.db.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("+strings.Join(names, ", ")+")")
	if err != nil {
		return nil, d.wrap("read server settings", err)
	}
	defer rows.Close()
	out := make(map[string]string, len(settingNames))
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, d.wrap("read server settings", err)
		}
		name = strings.ToLower(name)
		if a, ok := settingAliases[name]; ok {
			if _, set := out[a]; set {
				continue // the server has both spellings
			}
			name = a
		}
		out[name] = value
	}
	if err := rows.Err(); err != nil {
		return nil, d.wrap("read server settings", err)
	}
	return out, nil
}

var _ dialect.ServerProcessReporter = (*DB)(nil)

// ServerProcess is the server's pid file (@@pid_file, relative to
// @@datadir when not absolute): one process, the server.
func (d *DB) ServerProcess(ctx context.Context) (dialect.ServerProcess, error) {
	var file, dir string
	if err := d.db.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir").Scan(&file, &dir); err != nil {
		return dialect.ServerProcess{}, d.wrap("read the server's pid file", err)
	}
	if file != "" && !strings.HasPrefix(file, "/") && dir != "" {
		file = strings.TrimSuffix(dir, "/") + "/" + file
	}
	return dialect.ServerProcess{PIDFile: file, Names: []string{"mariadbd", "mysqld"}, How: "the server's pid file, " + file}, nil
}
