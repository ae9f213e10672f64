package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// CPU calibration (dialect.CPUCalibrator): dialect.CalibrationWork as a
// recursive common table expression, one row per round. SQLite runs
// inside oltplab, so there is no network to leave out: the statement is
// timed by oltplab's clock around it ('now' is fixed within a statement
// in SQLite and could not time it from inside).
var _ dialect.CPUCalibrator = (*Database)(nil)

// calibrationIterations: about 2.5 s on our 2-core test VM under load
// (400,000 rounds/s).
const calibrationIterations = 1_000_000

// maxCalibrationIterations keeps x*31 + i within 64 bits.
const maxCalibrationIterations = 1 << 40

// calibrationQuery is dialect.CalibrationWork as a recursive CTE: the
// recursion is a queue of one row, so it runs in constant memory.
const calibrationQuery = `WITH RECURSIVE r(i, x, s) AS (
	SELECT 0, 0, ''
	UNION ALL
	SELECT i + 1, (x * 31 + i + 1) % 1000003,
		substr(s || char(65 + ((x * 31 + i + 1) % 1000003) % 26), -16)
	FROM r WHERE i < ?1)
SELECT x, s FROM r WHERE i = ?1`

// CalibrationIterations is the default number of rounds and the most.
func (d *Database) CalibrationIterations() (standard, most int64) {
	return calibrationIterations, maxCalibrationIterations
}

// CalibrateCPU runs the query once on a connection of its own. It needs
// no database file: an in-memory database runs it.
func (d *Database) CalibrateCPU(ctx context.Context, iterations int64) (dialect.Calibration, error) {
	const op = "CPU calibration"
	if iterations < 1 || iterations > maxCalibrationIterations {
		return dialect.Calibration{}, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("iterations %d: want 1 to %d", iterations, int64(maxCalibrationIterations))}
	}
	db := memoryDB()
	defer db.Close()
	c := dialect.Calibration{Iterations: iterations, Method: "recursive CTE, timed by oltplab's clock (SQLite runs inside oltplab)"}
	start := time.Now()
	err := db.QueryRowContext(ctx, calibrationQuery, iterations).Scan(&c.X, &c.S)
	c.Seconds = time.Since(start).Seconds()
	if err != nil {
		return dialect.Calibration{}, d.wrap(op, err)
	}
	return c, nil
}

// memoryDB is a private in-memory database on one connection.
func memoryDB() *sql.DB {
	db, _ := sql.Open("sqlite", ":memory:") // sql.Open only fails for an unknown driver
	db.SetMaxOpenConns(1)
	return db
}
