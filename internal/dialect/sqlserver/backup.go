package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Backups with the server's own statements (dialect.ServerBackuper,
// through enginePart: only where the server understands BACKUP DATABASE):
// BACKUP DATABASE ... TO DISK ... WITH COPY_ONLY, which leaves the
// database's backup chain (its differential base, its log backups) as it
// was, and CHECKSUM, which verifies every page as it is read; RESTORE
// DATABASE as a new database with its files moved into a directory of the
// caller's, marked as a scratch database (scratch.go). Paths are the
// server's: on Windows, with backslashes. Needs BACKUP DATABASE
// (db_backupoperator) and CREATE DATABASE (dbcreator) permissions.

func (d *DB) serverBackup(ctx context.Context, path string) (dialect.ServerBackup, error) {
	stmt := "BACKUP DATABASE " + quoteName(d.dbName) + " TO DISK = @p1 WITH COPY_ONLY, CHECKSUM, INIT, FORMAT"
	b := dialect.ServerBackup{Path: path, Statement: stmt}
	op := "back " + d.dbName + " up into " + path
	if _, err := d.db.ExecContext(ctx, stmt, args([]any{path})...); err != nil {
		return b, d.wrap(op, err)
	}
	hdr, err := d.restoreRows(ctx, "RESTORE HEADERONLY FROM DISK = @p1", path)
	if err != nil {
		return b, d.wrap(op+": read its header", err)
	}
	if len(hdr) == 0 {
		return b, d.wrap(op, errors.New("RESTORE HEADERONLY found no backup in the file"))
	}
	fmt.Sscan(hdr[len(hdr)-1]["backupsize"], &b.Bytes)
	return b, nil
}

// restoreBackup restores the backup in path as a new scratch database.
func (d *DB) restoreBackup(ctx context.Context, path, dir string) (dialect.Target, error) {
	name := scratchPrefix + randomSuffix()
	op := "restore " + path + " as " + name
	files, err := d.restoreRows(ctx, "RESTORE FILELISTONLY FROM DISK = @p1", path)
	if err != nil {
		return dialect.Target{}, d.wrap(op+": list its files", err)
	}
	sep := "/"
	if strings.Contains(dir, `\`) {
		sep = `\`
	}
	stmt := "RESTORE DATABASE " + quoteName(name) + " FROM DISK = @p1 WITH RECOVERY"
	params := []any{path}
	for _, f := range files {
		ext := ".mdf"
		if f["type"] == "L" {
			ext = ".ldf"
		}
		params = append(params, f["logicalname"], strings.TrimRight(dir, `/\`)+sep+name+"_"+f["logicalname"]+ext)
		stmt += fmt.Sprintf(", MOVE @p%d TO @p%d", len(params)-1, len(params))
	}
	if _, err := d.db.ExecContext(ctx, stmt, args(params)...); err != nil {
		return dialect.Target{}, d.wrap(op, err)
	}
	t := d.targetOf(name)
	// Mark it (a scratch database's backup carries the mark already).
	s, err := open(ctx, t)
	if err == nil {
		_, err = s.db.ExecContext(ctx, `IF EXISTS (SELECT 1 FROM sys.extended_properties WHERE class = 0 AND name = @p1)
	EXEC sp_updateextendedproperty @name = @p1, @value = @p2
ELSE
	EXEC sp_addextendedproperty @name = @p1, @value = @p2`, markName, markValue)
		s.Close()
	}
	if err != nil {
		return dialect.Target{}, d.wrap(op+": mark it as oltplab's", err)
	}
	return t, nil
}

// deleteBackup removes a backup file with xp_delete_files (SQL Server
// 2019 and later, sysadmin).
func (d *DB) deleteBackup(ctx context.Context, path string) error {
	if _, err := d.db.ExecContext(ctx, "EXEC master.sys.xp_delete_files @p1", path); err != nil {
		return d.wrap("remove "+path+" from the server (it is left there)", err)
	}
	return nil
}

// restoreRows runs a RESTORE ... ONLY statement and returns its rows as
// maps from lower-case column names to text: their columns differ between
// server versions.
func (d *DB) restoreRows(ctx context.Context, stmt, path string) ([]map[string]string, error) {
	rows, err := d.db.QueryContext(ctx, stmt, args([]any{path})...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		m := map[string]string{}
		for i, c := range cols {
			m[strings.ToLower(c)] = vals[i].String
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
