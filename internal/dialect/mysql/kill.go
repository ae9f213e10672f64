package mysql

import (
	"context"
	"database/sql"
	"time"
)

// killTimeout bounds the KILL QUERY sent for a canceled statement.
const killTimeout = 10 * time.Second

// killOnCancel makes a long server-side statement on c (a rebuild, a
// calibration loop) stop when ctx ends. The driver answers a canceled
// context by closing the connection, which the server notices only when
// the statement next reads from or writes to it: an ALTER TABLE or a
// procedure's loop would run on to its end. So the statement is killed
// with KILL QUERY from another connection of the pool (a user may always
// kill its own statements). Call the returned stop once the statement
// returned.
func (d *DB) killOnCancel(ctx context.Context, c *sql.Conn) (stop func() bool, err error) {
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return nil, err
	}
	return context.AfterFunc(ctx, func() {
		kctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		_, _ = d.db.ExecContext(kctx, "KILL QUERY ?", id)
	}), nil
}
