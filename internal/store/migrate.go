package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A migration brings the schema from version-1 to version. Migrations are
// additive only (new tables, columns, indexes): nothing stored is ever
// dropped or rewritten. They run in order, each recorded in
// schema_migrations, all in one transaction. They are written in SQLite's
// words; a backend translates them into its own (backend.ddl: PostgreSQL
// gets BIGINT, BYTEA, DOUBLE PRECISION and identity columns), so both hold
// the same tables, columns and indexes under the same version numbers.
type migration struct {
	version int
	name    string
	stmts   []string
	// fill, when set, runs after stmts in the same transaction: for rows
	// a migration must add that SQL cannot write (a random key).
	fill func(ctx context.Context, t *dbTx, now time.Time) error
}

var migrations = []migration{
	{version: 1, name: "runs, profiles, histograms, samples", stmts: []string{
		`CREATE TABLE profiles (
			id         INTEGER PRIMARY KEY,
			label      TEXT NOT NULL,
			status     TEXT NOT NULL,
			created_at TEXT NOT NULL,
			ended_at   TEXT,
			params     TEXT NOT NULL DEFAULT '{}',
			context    TEXT NOT NULL DEFAULT '{}'
		)`,
		`CREATE INDEX profiles_by_label ON profiles(label, id)`,
		// kind and status are checked in Go, not by CHECK constraints:
		// SQLite cannot alter a CHECK without rebuilding the table, and new
		// kinds (fio, backup, ...) must arrive by an additive migration.
		`CREATE TABLE runs (
			id           INTEGER PRIMARY KEY,
			kind         TEXT NOT NULL,
			label        TEXT NOT NULL DEFAULT '',
			profile_id   INTEGER REFERENCES profiles(id),
			step         INTEGER,
			repeat       INTEGER,
			vus          INTEGER,
			status       TEXT NOT NULL,
			started_at   TEXT NOT NULL,
			ended_at     TEXT,
			target       TEXT NOT NULL DEFAULT '',
			dialect      TEXT NOT NULL DEFAULT '',
			tool_version TEXT NOT NULL DEFAULT '',
			seed         INTEGER,
			params       TEXT NOT NULL DEFAULT '{}',
			context      TEXT NOT NULL DEFAULT '{}',
			summary      TEXT,
			error        TEXT
		)`,
		`CREATE INDEX runs_by_kind ON runs(kind, id)`,
		`CREATE INDEX runs_by_label ON runs(label, id)`,
		`CREATE INDEX runs_by_profile ON runs(profile_id, step, repeat)`,
		`CREATE TABLE histograms (
			run_id INTEGER NOT NULL REFERENCES runs(id),
			tx     TEXT NOT NULL,
			hdr    BLOB NOT NULL,
			PRIMARY KEY (run_id, tx)
		) WITHOUT ROWID`,
		`CREATE TABLE samples (
			run_id INTEGER NOT NULL REFERENCES runs(id),
			t_ms   INTEGER NOT NULL,
			source TEXT NOT NULL,
			metric TEXT NOT NULL,
			device TEXT,
			value  REAL NOT NULL
		)`,
		`CREATE INDEX samples_by_series ON samples(run_id, source, metric, device, t_ms)`,
	}},
	{version: 2, name: "experiments, their steps, and the runs and profiles they own", stmts: []string{
		// One plan run. plan is the plan's text with secrets removed;
		// owner identifies the process running it (see Experiment.Owner).
		`CREATE TABLE experiments (
			id          INTEGER PRIMARY KEY,
			name        TEXT NOT NULL,
			status      TEXT NOT NULL,
			created_at  TEXT NOT NULL,
			ended_at    TEXT,
			plan_file   TEXT NOT NULL DEFAULT '',
			plan        TEXT NOT NULL DEFAULT '',
			plan_sha256 TEXT NOT NULL DEFAULT '',
			params      TEXT NOT NULL DEFAULT '{}',
			owner       TEXT NOT NULL DEFAULT '',
			error       TEXT
		)`,
		`CREATE INDEX experiments_by_name ON experiments(name, id)`,
		// One (target, step) of an experiment's schedule, in order (seq).
		`CREATE TABLE experiment_steps (
			experiment_id INTEGER NOT NULL REFERENCES experiments(id),
			seq           INTEGER NOT NULL,
			step_index    INTEGER NOT NULL,
			kind          TEXT NOT NULL,
			target        TEXT NOT NULL DEFAULT '',
			state         TEXT NOT NULL,
			attempts      INTEGER NOT NULL DEFAULT 0,
			started_at    TEXT,
			ended_at      TEXT,
			progress      TEXT,
			outcome       TEXT,
			error         TEXT,
			PRIMARY KEY (experiment_id, seq)
		) WITHOUT ROWID`,
		`ALTER TABLE profiles ADD COLUMN experiment_id INTEGER REFERENCES experiments(id)`,
		`ALTER TABLE profiles ADD COLUMN experiment_seq INTEGER`,
		`ALTER TABLE runs ADD COLUMN experiment_id INTEGER REFERENCES experiments(id)`,
		`ALTER TABLE runs ADD COLUMN experiment_seq INTEGER`,
		// Why a run no longer counts (its process died, or a resumed
		// experiment measured its slot again); NULL for a run that counts.
		`ALTER TABLE runs ADD COLUMN superseded TEXT`,
		`CREATE INDEX runs_by_experiment ON runs(experiment_id, experiment_seq)`,
		`CREATE INDEX profiles_by_experiment ON profiles(experiment_id, experiment_seq)`,
	}},
	// Who wrote a run or profile (writer.go: a running row whose process
	// is gone is abandoned) and a stable identity, so a result saved to a
	// file when the store was unusable is imported exactly once.
	{version: 3, name: "writers and identities of runs and profiles", stmts: []string{
		`ALTER TABLE runs ADD COLUMN uid TEXT`,
		`ALTER TABLE runs ADD COLUMN writer_pid INTEGER`,
		`ALTER TABLE runs ADD COLUMN writer_host TEXT`,
		`ALTER TABLE runs ADD COLUMN writer_started TEXT`,
		`CREATE UNIQUE INDEX runs_by_uid ON runs(uid)`,
		`CREATE INDEX runs_running ON runs(writer_host) WHERE status = 'running'`,
		`ALTER TABLE profiles ADD COLUMN uid TEXT`,
		`ALTER TABLE profiles ADD COLUMN writer_pid INTEGER`,
		`ALTER TABLE profiles ADD COLUMN writer_host TEXT`,
		`ALTER TABLE profiles ADD COLUMN writer_started TEXT`,
		`CREATE UNIQUE INDEX profiles_by_uid ON profiles(uid)`,
	}},
	// The rendezvous of a sharded run's driver processes (shard.go): each
	// shard records its arrival once; all agree on a start from them.
	{version: 4, name: "shard rendezvous", stmts: []string{
		`CREATE TABLE shard_arrivals (
			shard_group TEXT NOT NULL,
			shard_index INTEGER NOT NULL,
			shard_count INTEGER NOT NULL,
			arrived_at  TEXT NOT NULL,
			writer_pid  INTEGER,
			writer_host TEXT,
			PRIMARY KEY (shard_group, shard_index)
		) WITHOUT ROWID`,
	}},
	// What oltplab creates on disk for the time of a command (a backup
	// cycle's directory, a restored copy, fio's test file), recorded
	// before it exists, so that what a killed oltplab leaves is found and
	// removed later (leftover.go).
	{version: 5, name: "leftovers", stmts: []string{
		`CREATE TABLE leftovers (
			id             INTEGER PRIMARY KEY,
			path           TEXT NOT NULL,
			kind           TEXT NOT NULL,
			mark           TEXT NOT NULL,
			state          TEXT NOT NULL,
			created_at     TEXT NOT NULL,
			ended_at       TEXT,
			note           TEXT,
			experiment_id  INTEGER REFERENCES experiments(id),
			writer_pid     INTEGER,
			writer_host    TEXT,
			writer_started TEXT
		)`,
		`CREATE UNIQUE INDEX leftovers_by_mark ON leftovers(mark)`,
		`CREATE INDEX leftovers_present ON leftovers(writer_host) WHERE state = 'present'`,
	}},
	// The key that tags the files results are saved to when the store
	// cannot take them (key.go): one random key per store, created with
	// it, so `results import` takes only files this store's oltplab wrote.
	{version: 6, name: "the key of saved results", stmts: []string{
		`CREATE TABLE store_keys (
			purpose    TEXT PRIMARY KEY,
			key        BLOB NOT NULL,
			created_at TEXT NOT NULL
		) WITHOUT ROWID`,
	}, fill: createSavedKey},
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrate checks that the store is ours, not newer and not damaged (the
// last only when it is to be written: see OpenToRead), then applies the
// missing migrations in one transaction, which the backend serializes
// between processes. The checks only read, so a refused store is left
// exactly as it was.
func (s *Store) migrate(ctx context.Context) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()

	have, err := s.b.checkVersion(ctx, c)
	if err != nil {
		return err
	}
	if !s.toRead || have < SchemaVersion() {
		if err := s.b.checkIntegrity(ctx, c); err != nil {
			return err
		}
	}
	if err := s.b.prepare(ctx, c); err != nil {
		return err
	}
	if have == SchemaVersion() {
		return nil
	}

	t, err := c.BeginTx(ctx, nil) // SQLite: BEGIN IMMEDIATE (see _txlock in openSQLite)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer t.Rollback()
	if err := s.b.lockMigration(ctx, t); err != nil {
		return err
	}
	// Another process may have migrated between the check and the lock.
	have, err = s.b.checkVersion(ctx, t)
	if err != nil {
		return err
	}
	if have == SchemaVersion() {
		return nil
	}
	if _, err := t.ExecContext(ctx, s.b.ddl(schemaMigrationsDDL)); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if have == 0 {
		if err := s.b.markStore(ctx, t); err != nil {
			return err
		}
	}
	for _, m := range migrations {
		if m.version <= have {
			continue
		}
		for _, stmt := range m.stmts {
			if _, err := t.ExecContext(ctx, s.b.ddl(stmt)); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if m.fill != nil {
			if err := m.fill(ctx, t, s.now()); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`,
			m.version, formatTime(s.now())); err != nil {
			return fmt.Errorf("record migration %d: %w", m.version, err)
		}
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit migrations: %w", err)
	}
	return nil
}

// schemaMigrationsDDL is the table that records applied migrations.
const schemaMigrationsDDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	)`

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// storedVersion reads the newest applied migration of a store known to
// have schema_migrations; ErrNewerSchema when this oltplab does not know it.
func storedVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion() {
		return v, fmt.Errorf("%w (schema version %d, this oltplab knows up to %d): upgrade oltplab to read it; the store was not modified",
			ErrNewerSchema, v, SchemaVersion())
	}
	return v, nil
}
