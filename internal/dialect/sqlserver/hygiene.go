package sqlserver

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
)

// notPermitted are the errors of a login that may not do what it asked:
// permission denied in the database (229, 262, 297), "User does not have
// permission to perform this action" (15247, CHECKPOINT without db_owner).
var notPermitted = map[int32]bool{229: true, 262: true, 297: true, 15247: true}

// checkpoint writes the database's dirty pages to its data files
// (dialect.Checkpointer, through enginePart: only where the server is
// found to honour it). It needs db_owner, db_backupoperator or sysadmin.
func (d *DB) checkpoint(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		if notPermitted[serverErrno(err)] {
			return &dialect.Error{Class: dialect.ClassAuth, Op: "checkpoint",
				Err: fmt.Errorf("%w: CHECKPOINT needs db_owner, db_backupoperator or sysadmin (%w)", dialect.ErrNotPermitted, err)}
		}
		return d.wrap("checkpoint", err)
	}
	return nil
}
