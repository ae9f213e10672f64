package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Version is @@VERSION on one line, without its copyright line: product,
// version, build date, edition and operating system ("Microsoft SQL
// Server 2017 (RTM-CU31) ... Developer Edition (64-bit) on Linux ...",
// "Babelfish for PostgreSQL with SQL Server Compatibility - 12.0.2000.8
// ... (Babelfish 4.3.0)").
func (d *DB) Version(ctx context.Context) (string, error) {
	var v string
	if err := d.db.QueryRowContext(ctx, "SELECT @@VERSION").Scan(&v); err != nil {
		return "", d.wrap("read server version", err)
	}
	var parts []string
	for _, line := range strings.Split(v, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || strings.HasPrefix(line, "Copyright") {
			continue
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " "), nil
}

// serverProperties are the SERVERPROPERTY values recorded with every
// result, under their own names (NULL ones are left out: a property the
// server's version does not know).
var serverProperties = []string{
	"ProductVersion", "ProductLevel", "ProductUpdateLevel", "Edition", "EngineEdition", "Collation",
	"IsHadrEnabled", "IsClustered", "babelfish",
}

// configurations are the sys.configurations options recorded (value in
// use), under their own names.
var configurations = []string{
	"max server memory (MB)", "min server memory (MB)", "max degree of parallelism",
	"cost threshold for parallelism", "max worker threads", "recovery interval (min)",
	"lightweight pooling", "priority boost", "affinity mask", "user connections",
	"optimize for ad hoc workloads", "backup compression default",
}

// databaseSettings are the target database's columns of sys.databases
// recorded, as database.COLUMN. A column the server's version lacks
// (delayed_durability_desc before SQL Server 2014) is left out.
var databaseSettings = []string{
	"compatibility_level", "recovery_model_desc", "is_read_committed_snapshot_on",
	"snapshot_isolation_state_desc", "delayed_durability_desc", "page_verify_option_desc",
	"is_auto_create_stats_on", "is_auto_update_stats_on", "is_auto_update_stats_async_on", "target_recovery_time_in_seconds",
}

// Settings returns the server's properties, its configuration options
// and the target database's settings.
func (d *DB) Settings(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	sel := make([]string, len(serverProperties))
	for i, p := range serverProperties {
		sel[i] = "CAST(SERVERPROPERTY('" + p + "') AS NVARCHAR(256))"
	}
	vals := make([]sql.NullString, len(serverProperties))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := d.db.QueryRowContext(ctx, "SELECT "+strings.Join(sel, ", ")).Scan(dest...); err != nil {
		return nil, d.wrap("read SERVERPROPERTY", err)
	}
	for i, p := range serverProperties {
		if vals[i].Valid {
			out[p] = vals[i].String
		}
	}

	names := make([]string, len(configurations))
	for i, c := range configurations {
		names[i] = "'" + c + "'"
	}
	rows, err := d.db.QueryContext(ctx, "SELECT name, CAST(value_in_use AS NVARCHAR(64)) FROM sys.configurations WHERE name IN ("+
		strings.Join(names, ", ")+")")
	if err != nil {
		return nil, d.wrap("read sys.configurations", err)
	}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			rows.Close()
			return nil, d.wrap("read sys.configurations", err)
		}
		out[name] = value.String
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, d.wrap("read sys.configurations", err)
	}

	if err := d.databaseSettings(ctx, out); err != nil {
		return nil, d.wrap("read sys.databases", err)
	}
	return out, nil
}

// databaseSettings adds the target database's row of sys.databases,
// reading whichever of databaseSettings the server has.
func (d *DB) databaseSettings(ctx context.Context, out map[string]string) error {
	rows, err := d.db.QueryContext(ctx, "SELECT * FROM sys.databases WHERE database_id = DB_ID()")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if !rows.Next() {
		return fmt.Errorf("no row for this database: %w", rows.Err())
	}
	vals := make([]any, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range databaseSettings {
		want[s] = true
	}
	for i, c := range cols {
		if !want[strings.ToLower(c)] || vals[i] == nil {
			continue
		}
		v := vals[i]
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		out["database."+strings.ToLower(c)] = fmt.Sprint(v)
	}
	return rows.Err()
}
