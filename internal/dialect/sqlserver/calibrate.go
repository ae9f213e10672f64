package sqlserver

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
)

// CPU calibration (dialect.CPUCalibrator): dialect.CalibrationWork as a
// T-SQL batch, a WHILE loop timed by SYSDATETIME() around it. A batch
// needs no object in the database and leaves none; a canceled context
// sends TDS's attention, which stops the loop on the server.

// calibrationIterations: about 3 s on Babelfish 4.3 on our 2-core test VM
// (160,000 rounds/s); T-SQL loops on SQL Server run faster.
const calibrationIterations = 500_000

// maxCalibrationIterations keeps the loop within the half hour the
// microsecond timing covers, even at Babelfish's speed.
const maxCalibrationIterations = 100_000_000

// calibrationBatch is dialect.CalibrationWork in T-SQL; @p1 is the number
// of rounds. The duration is taken in microseconds below 30 minutes
// (DATEDIFF returns an INT), in milliseconds beyond.
const calibrationBatch = `DECLARE @n BIGINT, @i BIGINT, @x BIGINT, @s VARCHAR(32), @t0 DATETIME2, @t1 DATETIME2;
SET @n = @p1;
SET @i = 0;
SET @x = 0;
SET @s = '';
SET @t0 = SYSDATETIME();
WHILE @i < @n
BEGIN
	SET @i = @i + 1;
	SET @x = (@x * 31 + @i) % 1000003;
	SET @s = RIGHT(@s + CHAR(65 + @x % 26), 16);
END;
SET @t1 = SYSDATETIME();
SELECT @x, @s, CASE WHEN DATEDIFF(MINUTE, @t0, @t1) < 30 THEN DATEDIFF(MICROSECOND, @t0, @t1) / 1000000.0
	ELSE DATEDIFF(MILLISECOND, @t0, @t1) / 1000.0 END;`

// CalibrationIterations is the default number of rounds and the most.
func (d *DB) CalibrationIterations() (standard, most int64) {
	return calibrationIterations, maxCalibrationIterations
}

// CalibrateCPU runs the loop once, in one batch on one connection.
func (d *DB) CalibrateCPU(ctx context.Context, iterations int64) (dialect.Calibration, error) {
	const op = "CPU calibration"
	if iterations < 1 || iterations > maxCalibrationIterations {
		return dialect.Calibration{}, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("iterations %d: want 1 to %d", iterations, int64(maxCalibrationIterations))}
	}
	cal := dialect.Calibration{Iterations: iterations, Method: "T-SQL batch (WHILE loop), timed by SYSDATETIME()"}
	var secs float64
	if err := d.db.QueryRowContext(ctx, calibrationBatch, iterations).Scan(&cal.X, &cal.S, &secs); err != nil {
		return cal, d.wrap(op, err)
	}
	cal.Seconds = secs
	return cal, nil
}
