package mysql

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
)

// connectionLimitQuery reads what bounds this user's connections: the
// server's max_connections (MariaDB keeps one more for a user with SUPER
// or CONNECTION ADMIN, not counted here), max_user_connections (0: none)
// and the connections open now, in all and of this user (PROCESSLIST
// shows a user without PROCESS its own).
const connectionLimitQuery = `SELECT @@max_connections, @@max_user_connections,
	(SELECT CAST(VARIABLE_VALUE AS SIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'),
	(SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1))`

// ConnectionLimit says how many more connections this user may open on
// the server now (connectionLimitQuery).
func (d *DB) ConnectionLimit(ctx context.Context) (dialect.ConnectionLimit, error) {
	var maxConns, maxUser, open, userOpen int
	if err := d.db.QueryRowContext(ctx, connectionLimitQuery).Scan(&maxConns, &maxUser, &open, &userOpen); err != nil {
		return dialect.ConnectionLimit{}, d.wrap("read max_connections and the open connections", err)
	}
	avail := maxConns - open
	detail := fmt.Sprintf("max_connections %d, %d open", maxConns, open)
	if maxUser > 0 && maxUser-userOpen < avail {
		avail = maxUser - userOpen
		detail += fmt.Sprintf("; max_user_connections %d, %d of them open", maxUser, userOpen)
	}
	return dialect.ConnectionLimit{Available: max(avail, 0), Detail: detail}, nil
}

var _ dialect.ConnectionLimiter = (*DB)(nil)
