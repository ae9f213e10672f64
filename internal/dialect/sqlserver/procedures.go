package sqlserver

import (
	"context"
	_ "embed"
	"strings"
)

// proceduresSQL is the source of the stored procedures (T-SQL for SQL
// Server 2008 and later and for Babelfish).
//
//go:embed procedures.sql
var proceduresSQL string

// procedureNames are the procedures procedures.sql creates.
var procedureNames = []string{
	"oltplab_new_order", "oltplab_payment", "oltplab_order_status", "oltplab_delivery", "oltplab_stock_level",
}

// procedureBatches splits procedures.sql into its CREATE PROCEDURE
// batches: the text between lines holding only GO, without the comments
// between batches.
func procedureBatches(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.EqualFold(trimmed, "GO"):
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		case cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")):
			// Comments between batches.
		default:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return out
}

// InstallProcedures (re)creates the stored procedures, each dropped first
// (SQL Server 2008 has neither CREATE OR ALTER nor DROP ... IF EXISTS).
func (d *DB) InstallProcedures(ctx context.Context) error {
	for _, p := range procedureNames {
		if _, err := d.db.ExecContext(ctx, "IF OBJECT_ID(N'"+p+"', N'P') IS NOT NULL DROP PROCEDURE "+p); err != nil {
			return d.wrap("drop procedure "+p, err)
		}
	}
	for _, b := range procedureBatches(proceduresSQL) {
		if _, err := d.db.ExecContext(ctx, b); err != nil {
			name, _, _ := strings.Cut(strings.TrimPrefix(b, "CREATE PROCEDURE "), "\n")
			return d.wrap("create procedure "+strings.TrimSpace(name), err)
		}
	}
	return nil
}
