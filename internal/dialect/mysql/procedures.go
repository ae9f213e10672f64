package mysql

import (
	"context"
	_ "embed"
	"strings"
)

// proceduresSQL is the source of the stored procedures (SQL/PSM, the
// subset common to MariaDB and MySQL 8).
//
//go:embed procedures.sql
var proceduresSQL string

// procedureNames are the procedures procedures.sql creates.
var procedureNames = []string{
	"oltplab_new_order", "oltplab_payment", "oltplab_order_status", "oltplab_delivery", "oltplab_stock_level",
}

// functionNames are the stored functions procedures.sql creates (after
// the procedures).
var functionNames = []string{"oltplab_stock_quantity"}

// procedureStatements splits procedures.sql into its CREATE PROCEDURE
// statements: the text between lines holding only "$$", without comments
// outside the bodies and without DELIMITER lines.
func procedureStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "$$":
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		case strings.HasPrefix(trimmed, "DELIMITER"):
		case cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")):
			// Comments between statements.
		default:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return out
}

// InstallProcedures (re)creates the stored procedures and functions. MySQL
// 8 has no CREATE OR REPLACE PROCEDURE: each is dropped first.
func (d *DB) InstallProcedures(ctx context.Context) error {
	if err := d.dropProcedures(ctx); err != nil {
		return err
	}
	for _, s := range procedureStatements(proceduresSQL) {
		if _, err := d.db.ExecContext(ctx, s); err != nil {
			what, _, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(s, "CREATE ")), "(")
			return d.wrap("create "+what, err)
		}
	}
	return nil
}

// dropProcedures drops the stored procedures and functions, those that exist.
func (d *DB) dropProcedures(ctx context.Context) error {
	for _, p := range procedureNames {
		if _, err := d.db.ExecContext(ctx, "DROP PROCEDURE IF EXISTS "+p); err != nil {
			return d.wrap("drop procedure "+p, err)
		}
	}
	for _, f := range functionNames {
		if _, err := d.db.ExecContext(ctx, "DROP FUNCTION IF EXISTS "+f); err != nil {
			return d.wrap("drop function "+f, err)
		}
	}
	return nil
}
