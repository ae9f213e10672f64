package mysql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

// CPU calibration (dialect.CPUCalibrator): dialect.CalibrationWork as an
// SQL/PSM procedure, timed with SYSDATE(6) inside it (NOW() would be the
// statement's start). MariaDB and MySQL have no temporary procedures:
// each calibration creates one under a name of its own in the target
// database, calls it and drops it, so it needs CREATE ROUTINE and ALTER
// ROUTINE (a procedure left by an interrupted process is named
// oltplab_cpu_calibration_*). A canceled call is killed (killOnCancel).
var _ dialect.CPUCalibrator = (*DB)(nil)

// calibrationIterations: about 4 s on our 2-core test VM under load
// (120,000 rounds/s of MariaDB 10.11).
const calibrationIterations = 500_000

// maxCalibrationIterations keeps x*31 + i within BIGINT.
const maxCalibrationIterations = 1 << 40

// calibrationProcedure is dialect.CalibrationWork in SQL/PSM; %s is the
// procedure's name.
const calibrationProcedure = `CREATE PROCEDURE %s(IN n BIGINT)
BEGIN
	DECLARE i BIGINT DEFAULT 0;
	DECLARE x BIGINT DEFAULT 0;
	DECLARE s VARCHAR(32) DEFAULT '';
	DECLARE t0 DATETIME(6) DEFAULT SYSDATE(6);
	WHILE i < n DO
		SET i = i + 1;
		SET x = (x * 31 + i) %% 1000003;
		SET s = RIGHT(CONCAT(s, CHAR(65 + x %% 26 USING ascii)), 16);
	END WHILE;
	SELECT x, s, TIMESTAMPDIFF(MICROSECOND, t0, SYSDATE(6)) / 1000000.0;
END`

// CalibrationIterations is the default number of rounds and the most.
func (d *DB) CalibrationIterations() (standard, most int64) {
	return calibrationIterations, maxCalibrationIterations
}

// CalibrateCPU creates the procedure, calls it once and drops it.
func (d *DB) CalibrateCPU(ctx context.Context, iterations int64) (dialect.Calibration, error) {
	const op = "CPU calibration"
	if iterations < 1 || iterations > maxCalibrationIterations {
		return dialect.Calibration{}, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("iterations %d: want 1 to %d", iterations, int64(maxCalibrationIterations))}
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	name := "oltplab_cpu_calibration_" + hex.EncodeToString(suffix[:])
	c, err := d.db.Conn(ctx)
	if err != nil {
		return dialect.Calibration{}, d.wrap(op, err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, fmt.Sprintf(calibrationProcedure, quoteIdent(name))); err != nil {
		return dialect.Calibration{}, d.notPermitted(op+": create the procedure", "a calibration procedure needs CREATE ROUTINE", err)
	}
	defer func() {
		// On the pool, not c: a canceled call has closed c. The drop waits
		// for a call still running on the server.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = d.db.ExecContext(dctx, "DROP PROCEDURE IF EXISTS "+quoteIdent(name))
	}()
	stop, err := d.killOnCancel(ctx, c)
	if err != nil {
		return dialect.Calibration{}, d.wrap(op, err)
	}
	defer stop()
	cal := dialect.Calibration{Iterations: iterations, Method: "SQL/PSM procedure (WHILE loop), timed by SYSDATE(6)"}
	var secs float64
	if err := c.QueryRowContext(ctx, "CALL "+quoteIdent(name)+"(?)", iterations).Scan(&cal.X, &cal.S, &secs); err != nil {
		return cal, d.wrap(op, err)
	}
	cal.Seconds = secs
	return cal, nil
}
