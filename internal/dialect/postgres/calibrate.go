package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/oltplab/oltplab/internal/dialect"
)

// CPU calibration (dialect.CPUCalibrator): dialect.CalibrationWork as a
// PL/pgSQL loop in a temporary function (pg_temp, gone with the session:
// nothing is left in the database), timed with clock_timestamp() inside
// the function.
var _ dialect.CPUCalibrator = (*Database)(nil)

// calibrationIterations: about 1.3 s on our 2-core test VM under load
// (1.6 M rounds/s).
const calibrationIterations = 2_000_000

// calibrationFunction is dialect.CalibrationWork in PL/pgSQL. The loop
// variable of an integer FOR loop is an integer, hence the bound of
// CalibrateCPU.
const calibrationFunction = `CREATE FUNCTION pg_temp.oltplab_cpu_calibration(n integer,
	OUT x bigint, OUT s text, OUT seconds double precision) LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	x := 0;
	s := '';
	FOR i IN 1..n LOOP
		x := (x * 31 + i) % 1000003;
		s := right(s || chr(65 + (x % 26)::integer), 16);
	END LOOP;
	seconds := extract(epoch FROM clock_timestamp() - t0);
END $$`

// CalibrationIterations is the default number of rounds and the most.
func (d *Database) CalibrationIterations() (standard, most int64) {
	return calibrationIterations, math.MaxInt32
}

// CalibrateCPU runs the loop once on a connection of its own.
func (d *Database) CalibrateCPU(ctx context.Context, iterations int64) (dialect.Calibration, error) {
	const op = "CPU calibration"
	if iterations < 1 || iterations > math.MaxInt32 {
		return dialect.Calibration{}, &dialect.Error{Class: dialect.ClassOther, Op: op,
			Err: fmt.Errorf("iterations %d: want 1 to %d (a PL/pgSQL integer loop)", iterations, math.MaxInt32)}
	}
	c := dialect.Calibration{Iterations: iterations, Method: "PL/pgSQL loop in a temporary function, timed by clock_timestamp()"}
	err := d.admin(ctx, op, func(conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, calibrationFunction); err != nil {
			return err
		}
		return conn.QueryRow(ctx, "SELECT x, s, seconds FROM pg_temp.oltplab_cpu_calibration($1)", int32(iterations)).
			Scan(&c.X, &c.S, &c.Seconds)
	})
	return c, err
}
