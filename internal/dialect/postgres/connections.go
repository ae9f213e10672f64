package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

// connectionLimitQuery reads what bounds this user's connections: the
// server's max_connections less the slots it keeps for superusers
// (superuser_reserved_connections, and PostgreSQL 16's
// reserved_connections) unless the user is one, the role's and the
// database's own limits (-1: none), and the client backends open now
// (walsenders, autovacuum and background workers have slots of their
// own). pg_stat_activity lists every backend to every user.
const connectionLimitQuery = `SELECT
	current_setting('max_connections')::int,
	current_setting('superuser_reserved_connections')::int + COALESCE(current_setting('reserved_connections', true), '0')::int,
	r.rolsuper, r.rolconnlimit, d.datconnlimit,
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = current_user),
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = current_database())
FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()`

// ConnectionLimit says how many more connections this user may open on
// the server now (connectionLimitQuery).
func (d *Database) ConnectionLimit(ctx context.Context) (dialect.ConnectionLimit, error) {
	var (
		maxConns, reserved, roleLimit, dbLimit int
		super                                  bool
		open, roleOpen, dbOpen                 int
	)
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, connectionLimitQuery).Scan(&maxConns, &reserved, &super, &roleLimit, &dbLimit, &open, &roleOpen, &dbOpen)
	})
	if err != nil {
		return dialect.ConnectionLimit{}, fmt.Errorf("read max_connections and the open connections: %w", err)
	}
	usable, detail := maxConns, fmt.Sprintf("max_connections %d", maxConns)
	if !super && reserved > 0 {
		usable -= reserved
		detail += fmt.Sprintf(", %d reserved for superusers", reserved)
	}
	avail := usable - open
	detail += fmt.Sprintf(", %d open", open)
	if roleLimit >= 0 && roleLimit-roleOpen < avail {
		avail = roleLimit - roleOpen
		detail += fmt.Sprintf("; the role's CONNECTION LIMIT %d, %d of them open", roleLimit, roleOpen)
	}
	if dbLimit >= 0 && dbLimit-dbOpen < avail {
		avail = dbLimit - dbOpen
		detail += fmt.Sprintf("; the database's CONNECTION LIMIT %d, %d of them open", dbLimit, dbOpen)
	}
	return dialect.ConnectionLimit{Available: max(avail, 0), Detail: detail}, nil
}

var _ dialect.ConnectionLimiter = (*Database)(nil)
