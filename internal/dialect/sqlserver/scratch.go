package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// Scratch databases for `oltplab selftest` (dialect.Scratcher): a new
// database named oltplab_selftest_<random>, marked as oltplab's by a
// database-level extended property (sys.extended_properties, class 0)
// that only CreateScratch sets; DropScratch drops a database only when it
// carries that property with that value. Creating one needs CREATE
// DATABASE (dbcreator).

var _ dialect.Scratcher = (*DB)(nil)

const (
	scratchPrefix = "oltplab_selftest_"
	markName      = "oltplab"
	markValue     = "scratch database of oltplab selftest: dropped when the selftest ends"
)

// CreateScratch creates and marks a scratch database and returns its
// target, which differs from d's only in the database.
func (d *DB) CreateScratch(ctx context.Context) (dialect.Target, error) {
	name := scratchPrefix + randomSuffix()
	const op = "create a scratch database"
	if _, err := d.db.ExecContext(ctx, "CREATE DATABASE "+quoteName(name)); err != nil {
		if notPermitted[serverErrno(err)] || serverErrno(err) == 262 {
			return dialect.Target{}, &dialect.Error{Class: dialect.ClassAuth, Op: op,
				Err: fmt.Errorf("%w: CREATE DATABASE needs the dbcreator role (%w)", dialect.ErrNotPermitted, err)}
		}
		return dialect.Target{}, d.wrap(op, err)
	}
	t := d.targetOf(name)
	s, err := open(ctx, t)
	if err == nil {
		_, err = s.db.ExecContext(ctx, "EXEC sp_addextendedproperty @name = @p1, @value = @p2", markName, markValue)
		s.Close()
	}
	if err != nil {
		// Not marked: a database this call created a moment ago, under a
		// name of its own, dropped at once.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = d.db.ExecContext(dctx, "DROP DATABASE "+quoteName(name))
		return dialect.Target{}, d.wrap(op+": mark it as oltplab's", err)
	}
	return t, nil
}

// targetOf is d's target naming database name instead.
func (d *DB) targetOf(name string) dialect.Target {
	t := d.tg
	u := *t.URL
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "database") {
			q.Del(k)
		}
	}
	q.Set("database", name)
	u.RawQuery = q.Encode()
	t.URL = &u
	return t
}

// DropScratch drops the database t names if it carries the mark.
func (d *DB) DropScratch(ctx context.Context, t dialect.Target) error {
	cfg, _, err := config(t)
	if err != nil {
		return &dialect.Error{Class: dialect.ClassOther, Op: "drop the scratch database", Err: err}
	}
	name := cfg.Database
	op := "drop the scratch database " + name
	if !strings.HasPrefix(name, scratchPrefix) || name == d.dbName {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: dialect.ErrNotScratch}
	}
	s, err := open(ctx, t)
	if err != nil {
		return err
	}
	var mark sql.NullString
	err = s.db.QueryRowContext(ctx,
		"SELECT CAST(value AS NVARCHAR(256)) FROM sys.extended_properties WHERE class = 0 AND name = @p1", markName).Scan(&mark)
	s.Close()
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return d.wrap(op+": read its mark", err)
	}
	if !mark.Valid || mark.String != markValue {
		return &dialect.Error{Class: dialect.ClassOther, Op: op, Err: dialect.ErrNotScratch}
	}
	// Its connections are closed: a drop right after may still find one
	// going away.
	for attempt := 0; ; attempt++ {
		_, err = d.db.ExecContext(ctx, "DROP DATABASE "+quoteName(name))
		if err == nil || serverErrno(err) != 3702 || attempt == 10 { // 3702: in use
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return d.wrap(op, err)
}
