package load_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/oltplab/oltplab/internal/dbtest"
	"github.com/oltplab/oltplab/internal/dialect"
	_ "github.com/oltplab/oltplab/internal/dialect/sqlite"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/testenv"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func openSQLite(t *testing.T) dialect.Database {
	t.Helper()
	db, err := dialect.Open(context.Background(), dbtest.SQLite(t))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func count(t *testing.T, db dialect.Database, query string) int64 {
	t.Helper()
	ctx := context.Background()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	var n int64
	if err := c.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func readMeta(t *testing.T, db dialect.Database) (tpcc.Meta, error) {
	t.Helper()
	ctx := context.Background()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	return tpcc.ReadMeta(ctx, c)
}

// progressLog records what Build reports.
type progressLog struct {
	mu     sync.Mutex
	phases []load.Phase
	last   load.Progress
}

func (l *progressLog) record(p load.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.phases) == 0 || l.phases[len(l.phases)-1] != p.Phase {
		l.phases = append(l.phases, p.Phase)
	}
	l.last = p
}

// checkCounts compares every table's row count in the database with the
// population of TPC-C 4.3.3.1 and with what Build reported.
func checkCounts(t *testing.T, db dialect.Database, res load.Result, warehouses int) {
	t.Helper()
	var total int64
	for _, tb := range tpcc.Tables {
		got := count(t, db, "SELECT COUNT(*) FROM "+tb.String())
		want := int64(warehouses * tpcc.RowsPerWarehouse(tb))
		switch tb {
		case tpcc.Item:
			want = tpcc.ItemCount
		case tpcc.OrderLine:
			// 5..15 lines per order: the exact count is the sum of O_OL_CNT.
			want = count(t, db, "SELECT SUM(o_ol_cnt) FROM orders")
		}
		if got != want {
			t.Errorf("%s: got %d rows, want %d", tb, got, want)
		}
		if r := res.Rows[tb.String()]; r != got {
			t.Errorf("%s: Build reported %d rows, the table holds %d", tb, r, got)
		}
		total += got
	}
	if res.TotalRows != total {
		t.Errorf("TotalRows: got %d, want %d", res.TotalRows, total)
	}
}

func TestBuildSQLite(t *testing.T) {
	testenv.Require(t, testenv.Long)
	ctx := context.Background()
	db := openSQLite(t)
	var log progressLog
	o := load.Options{Warehouses: 1, Workers: 4, Seed: 42, ToolVersion: "test-1"}
	res, err := load.Build(ctx, db, o, log.record)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	checkCounts(t, db, res, 1)
	if got, want := res.Workers, 1; got != want {
		t.Errorf("Workers: got %d, want %d (capped by one warehouse and SQLite's single writer)", got, want)
	}

	m, err := readMeta(t, db)
	if err != nil {
		t.Fatalf("ReadMeta after Build: %v", err)
	}
	want := tpcc.Meta{
		SchemaVersion: tpcc.SchemaVersion, Warehouses: 1, LoadSeed: 42, Load: res.LoadConstants,
		ToolVersion: "test-1", BuiltAt: res.BuiltAt, Dialect: "sqlite", Procedures: res.Procedures,
	}
	if !m.BuiltAt.Equal(want.BuiltAt) {
		t.Errorf("meta BuiltAt: got %v, want %v", m.BuiltAt, want.BuiltAt)
	}
	m.BuiltAt = want.BuiltAt
	if m != want {
		t.Errorf("meta: got %+v, want %+v", m, want)
	}
	if got := tpcc.NewLoadConstants(tpcc.NewRand(42, tpcc.ConstantsStream)); got != m.Load {
		t.Errorf("meta load constants %+v are not those drawn from the seed (%+v)", m.Load, got)
	}

	// Progress: phases in build order, the last report is done with every row.
	wantPhases := []load.Phase{load.PhaseCheck, load.PhaseCreate, load.PhaseLoad, load.PhaseIndex}
	if res.Procedures {
		wantPhases = append(wantPhases, load.PhaseProcedures)
	}
	wantPhases = append(wantPhases, load.PhaseAnalyze, load.PhaseMeta, load.PhaseDone)
	if got := fmt.Sprint(log.phases); got != fmt.Sprint(wantPhases) {
		t.Errorf("phases: got %s, want %s", got, fmt.Sprint(wantPhases))
	}
	if log.last.Rows != res.TotalRows {
		t.Errorf("last progress Rows: got %d, want %d", log.last.Rows, res.TotalRows)
	}
	if got, want := log.last.ExpectedRows, load.ExpectedRows(1); got != want {
		t.Errorf("ExpectedRows: got %d, want %d", got, want)
	}

	// A second build without --drop is refused and leaves the data alone.
	_, err = load.Build(ctx, db, o, nil)
	if !errors.Is(err, load.ErrSchemaExists) {
		t.Fatalf("second Build without Drop: got %v, want ErrSchemaExists", err)
	}
	if got, want := count(t, db, "SELECT COUNT(*) FROM customer"), int64(tpcc.DistrictsPerWarehouse*tpcc.CustomersPerDistrict); got != want {
		t.Errorf("customers after refused build: got %d, want %d", got, want)
	}
	if _, err := readMeta(t, db); err != nil {
		t.Errorf("meta after refused build: %v", err)
	}

	// With --drop it rebuilds, here with another seed.
	o.Drop, o.Seed = true, 7
	res2, err := load.Build(ctx, db, o, nil)
	if err != nil {
		t.Fatalf("Build with Drop: %v", err)
	}
	checkCounts(t, db, res2, 1)
	m2, err := readMeta(t, db)
	if err != nil {
		t.Fatalf("ReadMeta after rebuild: %v", err)
	}
	if m2.LoadSeed != 7 || m2.Load != res2.LoadConstants {
		t.Errorf("meta after rebuild: got seed %d constants %+v, want 7 and %+v", m2.LoadSeed, m2.Load, res2.LoadConstants)
	}
}

func TestBuildCanceled(t *testing.T) {
	db := openSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel as soon as rows are flowing, as Ctrl-C would.
	progress := func(p load.Progress) {
		if p.Phase == load.PhaseLoad && p.Rows > 0 {
			cancel()
		}
	}
	_, err := load.Build(ctx, db, load.Options{Warehouses: 2, Workers: 1, Seed: 1}, progress)
	if err == nil {
		t.Fatal("Build with a canceled context: got nil error")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
	var ie *load.IncompleteError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not an *IncompleteError", err)
	}
	if ie.Phase != load.PhaseLoad {
		t.Errorf("IncompleteError.Phase: got %s, want load", ie.Phase)
	}
	_, err = readMeta(t, db)
	var se *tpcc.SchemaError
	if !errors.As(err, &se) || se.Kind != tpcc.SchemaMissing {
		t.Errorf("ReadMeta after canceled build: got %v, want a SchemaError of kind missing", err)
	}
	// The half-built schema is still there, so a plain build refuses it.
	if _, err := load.Build(context.Background(), db, load.Options{Warehouses: 1, Workers: 1}, nil); !errors.Is(err, load.ErrSchemaExists) {
		t.Errorf("Build over a half-built schema: got %v, want ErrSchemaExists", err)
	}
}

func TestBuildRefusesMetaOnly(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	if err := db.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	if _, err := load.Build(ctx, db, load.Options{Warehouses: 1, Workers: 1}, nil); !errors.Is(err, load.ErrSchemaExists) {
		t.Errorf("Build over empty tables: got %v, want ErrSchemaExists", err)
	}
}
