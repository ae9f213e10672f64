package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// applicationID marks the SQLite file as an oltplab results store
// (PRAGMA application_id; "oltb").
const applicationID = 0x6f6c7462

// A migration brings the schema from version-1 to version. Migrations are
// additive only (new tables, columns, indexes): nothing stored is ever
// dropped or rewritten. They run in order, each recorded in
// schema_migrations, all in one transaction.
type migration struct {
	version int
	name    string
	stmts   []string
}

var migrations = []migration{
	{version: 1, name: "runs, profiles, histograms, samples", stmts: []string{
		`PRAGMA application_id = ` + fmt.Sprint(applicationID),
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
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrate checks that the file is ours, not newer and not damaged (the
// last only when it is to be written: see OpenToRead), then
// applies the missing migrations in one immediate transaction. The checks
// only read, so a refused file is left exactly as it was.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()

	have, err := checkVersion(ctx, conn)
	if err != nil {
		return err
	}
	if !s.toRead || have < SchemaVersion() {
		if err := quickCheck(ctx, conn); err != nil {
			return err
		}
	}
	// Persistent in the file; a no-op when already WAL. Not allowed inside
	// a transaction, so it comes before it.
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return fmt.Errorf("set WAL mode: %w", err)
	}

	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see _txlock in Open)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	// Another process may have migrated between the check and the lock.
	have, err = checkVersion(ctx, tx)
	if err != nil {
		return err
	}
	if have == SchemaVersion() {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range migrations {
		if m.version <= have {
			continue
		}
		for _, stmt := range m.stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`,
			m.version, formatTime(s.now())); err != nil {
			return fmt.Errorf("record migration %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migrations: %w", err)
	}
	return nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkVersion returns the stored schema version (0 for an empty file),
// ErrNewerSchema for a newer one and ErrNotStore for someone else's file.
func checkVersion(ctx context.Context, q queryer) (int, error) {
	var appID int64
	if err := q.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return 0, fmt.Errorf("read application id: %w", err)
	}
	var hasMigrations, otherTables int
	if err := q.QueryRowContext(ctx, `SELECT
			count(*) FILTER (WHERE name = 'schema_migrations'),
			count(*) FILTER (WHERE name <> 'schema_migrations')
		FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).
		Scan(&hasMigrations, &otherTables); err != nil {
		return 0, fmt.Errorf("list tables: %w", err)
	}
	if appID != applicationID && (appID != 0 || hasMigrations > 0 || otherTables > 0) {
		return 0, fmt.Errorf("%w: the SQLite file holds other data (application id %#x)", ErrNotStore, appID)
	}
	if hasMigrations == 0 {
		if otherTables > 0 {
			return 0, fmt.Errorf("%w: tables but no schema_migrations", ErrNotStore)
		}
		return 0, nil
	}
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion() {
		return v, fmt.Errorf("%w (schema version %d, this oltplab knows up to %d): upgrade oltplab to read it; the file was not modified",
			ErrNewerSchema, v, SchemaVersion())
	}
	return v, nil
}

// quickCheck runs SQLite's quick_check (the structure of every page and
// index, without comparing index content to tables) and turns a failure
// into ErrDamaged with the first problems it names.
func quickCheck(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, `PRAGMA quick_check(3)`)
	if err != nil {
		return fmt.Errorf("check integrity: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return fmt.Errorf("check integrity: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check integrity: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w (integrity check: %s)", ErrDamaged, strings.Join(problems, "; "))
	}
	return nil
}
