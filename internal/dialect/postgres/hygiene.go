package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Per-step hygiene (dialect.Checkpointer, dialect.Resetter).
//
// The baseline is a second database, <db>_oltplab_base, created with
// CREATE DATABASE ... TEMPLATE <db> right after a build; Reset drops <db>
// and creates it again from that template. A template copy needs that
// nobody is connected to the source: both steps wait a few seconds for
// sessions that are closing, and fail naming those that stay. Only with
// EndOtherSessions (--terminate-sessions) do they end this user's other
// sessions of the database (pg_terminate_backend, never another user's). The administrative
// statements run on a connection to the maintenance database "postgres"
// (or template1) with the same credentials; the user needs CREATEDB and
// ownership of <db> (or superuser).
//
// What a drop and re-create would lose is carried over: the owner, the
// connection limit, the database's grants and its ALTER DATABASE / ALTER
// ROLE ... IN DATABASE settings.
//
// The baseline's mark (dialect.BaselineMark: an id, when it was saved, the
// build's fingerprint) is the COMMENT of the baseline database, set right
// after the copy. A database of that name without the mark is the user's:
// SaveBaseline does not replace it, Reset does not copy it back, and
// DropBaseline does not drop it (dialect.ErrNotOurs). A COMMENT is not
// copied by CREATE DATABASE ... TEMPLATE, so a copy of the baseline is not
// marked either.
var (
	_ dialect.Checkpointer  = (*Database)(nil)
	_ dialect.Resetter      = (*Database)(nil)
	_ dialect.BaselineSizer = (*Database)(nil)
	_ dialect.SessionEnder  = (*Database)(nil)
)

const (
	// baselineSuffix names the baseline database: <db>_oltplab_base.
	baselineSuffix = "_oltplab_base"
	// maxIdentifierLen is NAMEDATALEN-1.
	maxIdentifierLen = 63
	// inUseWait bounds how long a drop or a template copy is tried again
	// while sessions go away (SQLSTATE 55006), after a second try; between
	// tries it pauses inUsePause. The server itself waits up to 5 s for
	// the sessions within each try (CountOtherDBBackends), so a session
	// that stays is reported after two tries, about 10 s: counting 50
	// tries made that over four minutes.
	inUseWait  = 5 * time.Second
	inUsePause = 100 * time.Millisecond
	// sqlstate codes used here.
	stateInsufficientPrivilege = "42501"
	stateObjectInUse           = "55006"
	stateInvalidCatalogName    = "3D000"
)

// Checkpoint runs CHECKPOINT: every dirty buffer is written and fsynced and
// the WAL is marked, so that the next step does not pay for this one's
// writes. It needs superuser or, from PostgreSQL 15, the pg_checkpoint role.
func (d *Database) Checkpoint(ctx context.Context) error {
	const op = "checkpoint"
	err := d.admin(ctx, op, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CHECKPOINT")
		return err
	})
	return notPermitted(op, "CHECKPOINT needs superuser or the pg_checkpoint role (PostgreSQL 15+)", err)
}

// notPermitted turns an insufficient_privilege error into a *dialect.Error
// of class ClassAuth wrapping dialect.ErrNotPermitted with what is needed;
// other errors pass unchanged.
func notPermitted(op, need string, err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) || pe.Code != stateInsufficientPrivilege {
		return err
	}
	return &dialect.Error{Class: dialect.ClassAuth, Op: op,
		Err: fmt.Errorf("%w: %s: %w", dialect.ErrNotPermitted, need, pe)}
}

// EndOtherSessions lets SaveBaseline and Reset end the other sessions of
// this database user on the database (pg_terminate_backend); without it
// they never do.
func (d *Database) EndOtherSessions(on bool) { d.endOthers.Store(on) }

// BaselineBytes is the size of the database, which the baseline copies.
func (d *Database) BaselineBytes(ctx context.Context) (int64, error) {
	var n int64
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	})
	if err != nil {
		return 0, wrapPG("read the size of the database", err)
	}
	return n, nil
}

// baselineName is the baseline database of the target database.
func (d *Database) baselineName() (string, error) {
	name := d.cfg.Database + baselineSuffix
	if len(name) > maxIdentifierLen {
		return "", &dialect.Error{Class: dialect.ClassOther, Op: "name the baseline database",
			Err: fmt.Errorf("%q is longer than %d bytes: use a shorter database name to reset between steps", name, maxIdentifierLen)}
	}
	return name, nil
}

// maintenance opens a connection to the maintenance database "postgres",
// or template1 where "postgres" does not exist, with the target's
// credentials.
func (d *Database) maintenance(ctx context.Context) (*pgx.Conn, error) {
	var err error
	cfg := d.cfg
	for _, db := range []string{"postgres", "template1"} {
		cfg = d.cfg.Copy()
		cfg.Database = db
		var c *pgx.Conn
		if c, err = pgx.ConnectConfig(ctx, cfg); err == nil {
			return c, nil
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != stateInvalidCatalogName {
			break
		}
	}
	return nil, &dialect.Error{Class: classify(err), Op: "connect to the maintenance database of " + d.target, Err: connectCause(cfg, err)}
}

// fingerprint reads the build fingerprint of the target database. found is
// false when the database does not exist.
func (d *Database) fingerprint(ctx context.Context) (fp string, found bool, err error) {
	c, err := d.Connect(ctx)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == stateInvalidCatalogName {
			return "", false, nil
		}
		return "", false, fmt.Errorf("read build metadata: %w", err)
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		return "", true, &dialect.Error{Class: classify(err), Op: "read build metadata", Err: err}
	}
	return dialect.Fingerprint(m), true, nil
}

// baselineMark reads the mark of database base: exists is false when
// there is no such database, marked false when it has no mark.
func baselineMark(ctx context.Context, c *pgx.Conn, base string) (m dialect.BaselineMark, exists, marked bool, err error) {
	var comment *string
	err = c.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", base).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, false, nil
	}
	if err != nil {
		return m, false, false, err
	}
	m, marked = dialect.ParseBaselineMark(deref(comment))
	return m, true, marked, nil
}

// SaveBaseline copies the database into <db>_oltplab_base with CREATE
// DATABASE ... TEMPLATE, replacing an older baseline of oltplab's (never a
// database of that name without its mark), and marks the copy with its
// COMMENT.
func (d *Database) SaveBaseline(ctx context.Context) error {
	const op = "save baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	fp, found, err := d.fingerprint(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !found {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("database %s does not exist", d.cfg.Database)}
	}
	c, err := d.maintenance(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, exists, marked, err := baselineMark(ctx, c, base)
	if err != nil {
		return wrapPG(op+": look up the old baseline", err)
	}
	if exists && !marked {
		return dialect.NotOurs(op, "database "+base, "not replaced; rename it, or drop it yourself if it is yours to lose")
	}
	_ = d.Close() // the metadata connection; it reopens on demand
	src, dst := quoteIdent(d.cfg.Database), quoteIdent(base)
	steps := []struct{ what, sql, need string }{
		{"copy the database", "CREATE DATABASE " + dst + " TEMPLATE " + src, "a template copy needs CREATEDB"},
	}
	if exists {
		steps = append([]struct{ what, sql, need string }{
			{"drop the old baseline", "DROP DATABASE " + dst, "dropping the old baseline needs its ownership"}}, steps...)
	}
	for _, s := range steps {
		if err := d.execInUse(ctx, c, d.cfg.Database, s.sql); err != nil {
			return notPermitted(op+": "+s.what, s.need, wrapPG(op+": "+s.what, err))
		}
	}
	// Marked first, then nobody connects to the baseline by mistake (which
	// would block Reset).
	for _, q := range []string{
		"COMMENT ON DATABASE " + dst + " IS " + quoteLiteral(dialect.NewBaselineMark(fp).String()),
		"ALTER DATABASE " + dst + " ALLOW_CONNECTIONS false",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return wrapPG(op+": label the baseline", err)
		}
	}
	return nil
}

// Reset drops the database and creates it again from its baseline, after
// checking that the database still holds the build the baseline was saved
// from. A database that is missing (a reset interrupted between the drop
// and the copy) is created from the baseline without that check.
func (d *Database) Reset(ctx context.Context) error {
	const op = "reset to baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	c, err := d.maintenance(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close(context.WithoutCancel(ctx))

	mark, exists, marked, err := baselineMark(ctx, c, base)
	if err != nil {
		return wrapPG(op+": look up the baseline", err)
	}
	if !exists {
		return &dialect.Error{Class: dialect.ClassUndefinedObject, Op: op,
			Err: fmt.Errorf("%w (database %s does not exist)", dialect.ErrNoBaseline, base)}
	}
	if !marked {
		return dialect.NotOurs(op, "database "+base, "not copied back; rename it, or drop it yourself if it is yours to lose")
	}
	baseFP := mark.Fingerprint
	fp, found, err := d.fingerprint(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if found {
		if err := dialect.CheckFingerprint(op, fp, baseFP); err != nil {
			return err
		}
	}

	var keep *keptProperties
	if found {
		if keep, err = readKept(ctx, c, d.cfg.Database); err != nil {
			return wrapPG(op+": read database properties", err)
		}
		if !keep.mayOwn {
			return &dialect.Error{Class: dialect.ClassAuth, Op: op,
				Err: fmt.Errorf("%w: the database belongs to %s, and this user may not create databases for that role", dialect.ErrNotPermitted, keep.owner)}
		}
	}
	_ = d.Close() // the metadata connection; it reopens on demand
	db := quoteIdent(d.cfg.Database)
	if found {
		if err := d.execInUse(ctx, c, d.cfg.Database, "DROP DATABASE "+db); err != nil {
			return notPermitted(op+": drop the database", "dropping the database needs its ownership", wrapPG(op+": drop the database", err))
		}
	}
	create := "CREATE DATABASE " + db + " TEMPLATE " + quoteIdent(base)
	if keep != nil {
		create += " OWNER " + quoteIdent(keep.owner)
		if keep.connLimit != -1 {
			create += fmt.Sprintf(" CONNECTION LIMIT %d", keep.connLimit)
		}
	}
	if err := d.execInUse(ctx, c, base, create); err != nil {
		return notPermitted(op+": copy the baseline", "a template copy needs CREATEDB",
			wrapPG(op+": copy the baseline (the database is now missing; Reset again restores it)", err))
	}
	if keep != nil {
		if err := keep.restore(ctx, c, db); err != nil {
			return wrapPG(op+": restore database grants and settings", err)
		}
	}
	return nil
}

// DropBaseline drops the baseline database, if there is one and it
// carries oltplab's mark.
func (d *Database) DropBaseline(ctx context.Context) error {
	const op = "drop baseline"
	base, err := d.baselineName()
	if err != nil {
		return err
	}
	c, err := d.maintenance(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, exists, marked, err := baselineMark(ctx, c, base)
	if err != nil {
		return wrapPG(op+": look up the baseline", err)
	}
	if !exists {
		return nil
	}
	if !marked {
		return dialect.NotOurs(op, "database "+base, "not dropped; drop it yourself if it is yours to lose")
	}
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(base)); err != nil {
		return notPermitted(op, "dropping the baseline needs its ownership", wrapPG(op, err))
	}
	return nil
}

// execInUse runs a DROP DATABASE or CREATE DATABASE ... TEMPLATE that needs
// database busy to have no sessions. It retries while sessions go away
// (oltplab's own close just before); with EndOtherSessions it also ends
// this user's other sessions of busy. Sessions of other users are never
// touched. When sessions stay, the error wraps dialect.ErrInUse and says
// who is connected.
func (d *Database) execInUse(ctx context.Context, c *pgx.Conn, busy, sql string) error {
	start := time.Now()
	for i := 0; ; i++ {
		if d.endOthers.Load() {
			if _, err := c.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()`, busy); err != nil {
				return fmt.Errorf("end this user's sessions of %s: %w", busy, err)
			}
		}
		_, err := c.Exec(ctx, sql)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != stateObjectInUse || i >= 1 && time.Since(start) >= inUseWait {
			if pe != nil && pe.Code == stateObjectInUse {
				return d.inUse(ctx, c, busy)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(inUsePause):
		}
	}
}

// inUse describes the sessions that keep database busy in use.
func (d *Database) inUse(ctx context.Context, c *pgx.Conn, busy string) error {
	var n, sameUser int
	var who string
	_ = c.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE usename = current_user),
		coalesce(string_agg(DISTINCT usename || coalesce(' (' || nullif(application_name, '') || ')', ''), ', '), '')
		FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, busy).Scan(&n, &sameUser, &who)
	hint := "close them"
	switch {
	case d.endOthers.Load() && sameUser < n:
		hint = "close them: oltplab ends only its own database user's sessions"
	case sameUser > 0:
		hint = "close them, or pass --terminate-sessions to let oltplab end this database user's other sessions"
	}
	return &dialect.Error{Class: dialect.ClassOther, Op: "reset " + busy,
		Err: fmt.Errorf("%w: %d session(s) of %s stay connected to %s: %s", dialect.ErrInUse, n, who, busy, hint)}
}

// keptProperties are the properties of a database that DROP DATABASE
// loses and the copy from the baseline must get back.
type keptProperties struct {
	owner     string
	mayOwn    bool // this user may create a database owned by owner
	connLimit int32
	// grants are GRANT statements for the database's ACL; revokePublic:
	// the ACL does not give PUBLIC its default privileges.
	grants       []grant
	revokePublic bool
	settings     []setting
}

type grant struct {
	grantee   string // "" is PUBLIC
	privilege string
	grantable bool
}

type setting struct {
	role        string // "" for ALTER DATABASE ... SET
	name, value string
}

// readKept reads the properties of database db.
func readKept(ctx context.Context, c *pgx.Conn, db string) (*keptProperties, error) {
	k := &keptProperties{}
	var hasACL bool
	err := c.QueryRow(ctx, `SELECT pg_get_userbyid(datdba), pg_has_role(current_user, datdba, 'MEMBER'),
		datconnlimit, datacl IS NOT NULL FROM pg_database WHERE datname = $1`, db).
		Scan(&k.owner, &k.mayOwn, &k.connLimit, &hasACL)
	if err != nil {
		return nil, fmt.Errorf("read owner: %w", err)
	}
	if hasACL {
		rows, err := c.Query(ctx, `SELECT coalesce(pg_get_userbyid(nullif(a.grantee, 0)), ''), a.privilege_type, a.is_grantable
			FROM pg_database d, aclexplode(d.datacl) a
			WHERE d.datname = $1 AND a.grantee <> d.datdba`, db)
		if err != nil {
			return nil, fmt.Errorf("read grants: %w", err)
		}
		k.grants, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (grant, error) {
			var g grant
			err := r.Scan(&g.grantee, &g.privilege, &g.grantable)
			return g, err
		})
		if err != nil {
			return nil, fmt.Errorf("read grants: %w", err)
		}
		k.revokePublic = true
	}
	rows, err := c.Query(ctx, `SELECT coalesce(pg_get_userbyid(nullif(s.setrole, 0)), ''), cfg
		FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) cfg
		WHERE d.datname = $1`, db)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	k.settings, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (setting, error) {
		var s setting
		var kv string
		if err := r.Scan(&s.role, &kv); err != nil {
			return s, err
		}
		s.name, s.value, _ = strings.Cut(kv, "=")
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return k, nil
}

// restore applies the kept grants and settings to the new database db
// (quoted). A setting goes back through set_config and SET ... FROM
// CURRENT, which takes the value in the text form the catalog stores.
func (k *keptProperties) restore(ctx context.Context, c *pgx.Conn, db string) error {
	if k.revokePublic {
		if _, err := c.Exec(ctx, "REVOKE ALL ON DATABASE "+db+" FROM PUBLIC"); err != nil {
			return fmt.Errorf("revoke default privileges: %w", err)
		}
	}
	for _, g := range k.grants {
		to := "PUBLIC"
		if g.grantee != "" {
			to = quoteIdent(g.grantee)
		}
		q := "GRANT " + g.privilege + " ON DATABASE " + db + " TO " + to
		if g.grantable {
			q += " WITH GRANT OPTION"
		}
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("grant %s to %s: %w", g.privilege, to, err)
		}
	}
	for _, s := range k.settings {
		alter := "ALTER DATABASE " + db
		if s.role != "" {
			alter = "ALTER ROLE " + quoteIdent(s.role) + " IN DATABASE " + db
		}
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config($1, $2, true)", s.name, s.value); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, alter+" SET "+quoteIdent(s.name)+" FROM CURRENT")
			return err
		})
		if err != nil {
			return fmt.Errorf("set %s: %w", s.name, err)
		}
	}
	return nil
}

// wrapPG classifies err as a *dialect.Error naming op; a *dialect.Error
// passes unchanged.
func wrapPG(op string, err error) error {
	if err == nil {
		return nil
	}
	var de *dialect.Error
	if errors.As(err, &de) {
		return err
	}
	return &dialect.Error{Class: classify(err), Op: op, Err: err}
}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var _ dialect.Syncer = (*Database)(nil)

// SyncCommitted makes every commit before it durable (syncCommits).
func (d *Database) SyncCommitted(ctx context.Context) error {
	return d.admin(ctx, "sync commits", func(c *pgx.Conn) error { return syncCommits(ctx, c) })
}

// syncCommits commits one transaction with synchronous_commit on. Its
// commit waits for the WAL to be flushed up to its own record, and the WAL
// is one sequence, so every commit before it is flushed too. The
// transaction must write WAL: PostgreSQL commits one that wrote none
// asynchronously whatever the setting (a bare SELECT pg_current_xact_id()
// did not flush: TestBuildSurvivesServerCrash). A temporary table's
// catalog rows are logged; it needs no privilege but TEMP (PUBLIC's by
// default), where CHECKPOINT would need pg_checkpoint.
func syncCommits(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, "SET synchronous_commit = on"); err != nil {
		return err
	}
	_, err := c.Exec(ctx, "CREATE TEMPORARY TABLE oltplab_sync () ON COMMIT DROP")
	return err
}
