package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// columnTypes are the column types of the nine tables (TPC-C 1.3.1), in
// the order of tpcc.Table.Columns. Identifiers are INTEGER; money is exact
// NUMERIC; key columns are NOT NULL so that adding the primary keys after
// the load needs no extra scan.
var columnTypes = map[tpcc.Table][]string{
	tpcc.Item: {"INTEGER NOT NULL", "INTEGER", "VARCHAR(24)", "NUMERIC(5,2)", "VARCHAR(50)"},
	tpcc.Warehouse: {"INTEGER NOT NULL", "VARCHAR(10)", "VARCHAR(20)", "VARCHAR(20)", "VARCHAR(20)",
		"CHAR(2)", "CHAR(9)", "NUMERIC(4,4)", "NUMERIC(12,2)"},
	tpcc.Stock: {"INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER",
		"CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)", "CHAR(24)",
		"INTEGER", "INTEGER", "INTEGER", "VARCHAR(50)"},
	tpcc.District: {"INTEGER NOT NULL", "INTEGER NOT NULL", "VARCHAR(10)", "VARCHAR(20)", "VARCHAR(20)", "VARCHAR(20)",
		"CHAR(2)", "CHAR(9)", "NUMERIC(4,4)", "NUMERIC(12,2)", "INTEGER"},
	tpcc.Customer: {"INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER NOT NULL", "VARCHAR(16)", "CHAR(2)", "VARCHAR(16)",
		"VARCHAR(20)", "VARCHAR(20)", "VARCHAR(20)", "CHAR(2)", "CHAR(9)", "CHAR(16)", "TIMESTAMP", "CHAR(2)",
		"NUMERIC(12,2)", "NUMERIC(4,4)", "NUMERIC(12,2)", "NUMERIC(12,2)", "INTEGER", "INTEGER", "VARCHAR(500)"},
	tpcc.History: {"INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "TIMESTAMP", "NUMERIC(6,2)", "VARCHAR(24)"},
	tpcc.Orders: {"INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER", "TIMESTAMP", "INTEGER",
		"INTEGER", "INTEGER"},
	tpcc.NewOrderTable: {"INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER NOT NULL"},
	tpcc.OrderLine: {"INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER NOT NULL", "INTEGER",
		"INTEGER", "TIMESTAMP", "INTEGER", "NUMERIC(6,2)", "CHAR(24)"},
}

// createTableSQL returns the CREATE TABLE statement of t.
func createTableSQL(t tpcc.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(t.String())
	b.WriteString(" (")
	types := columnTypes[t]
	for i, c := range t.Columns() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
		b.WriteByte(' ')
		b.WriteString(types[i])
	}
	// Autovacuum stays off while the build loads and indexes the table
	// (it would vacuum half-loaded tables and block the index builds);
	// Analyze, the build's last step, turns it back on.
	b.WriteString(") WITH (autovacuum_enabled = off")
	if ff, ok := fillFactors[t]; ok {
		fmt.Fprintf(&b, ", fillfactor = %d", ff)
	}
	b.WriteString(")")
	return b.String()
}

// fillFactors leave room in the pages of the tables whose rows the
// transactions update (CUSTOMER by Payment and Delivery, STOCK by
// New-Order, ORDERS and ORDER-LINE by Delivery), loaded or inserted, so
// that the new version of an updated row fits in its page: a HOT update,
// which inserts into none of the table's indexes. Full pages made 46 % of
// the customer updates insert into both customer indexes; measured side
// by side on two copies of one database, a Payment then wrote 10 % fewer
// WAL records and a Delivery 30 % fewer WAL bytes, with fewer buffers.
// The tables take about a tenth more pages. DISTRICT and WAREHOUSE, a few
// rows updated again and again, are pruned in place already.
var fillFactors = map[tpcc.Table]int{
	tpcc.Customer:  90,
	tpcc.Stock:     90,
	tpcc.Orders:    90,
	tpcc.OrderLine: 90,
}

const createMetaSQL = "CREATE TABLE " + tpcc.MetaTable + " (k VARCHAR(64) PRIMARY KEY, v VARCHAR(1024) NOT NULL)"

// primaryKeys are the natural keys of TPC-C 1.3.1. HISTORY has none.
var primaryKeys = []struct {
	table tpcc.Table
	cols  string
}{
	{tpcc.OrderLine, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{tpcc.Stock, "s_w_id, s_i_id"},
	{tpcc.Customer, "c_w_id, c_d_id, c_id"},
	{tpcc.Orders, "o_w_id, o_d_id, o_id"},
	{tpcc.NewOrderTable, "no_w_id, no_d_id, no_o_id"},
	{tpcc.Item, "i_id"},
	{tpcc.District, "d_w_id, d_id"},
	{tpcc.Warehouse, "w_id"},
}

// secondaryIndexes serve the customer-by-last-name lookups (TPC-C 2.5.2.2,
// 2.6.2.2) and the customer's last order (2.6.2.2).
var secondaryIndexes = []struct {
	name  string
	table tpcc.Table
	cols  string
}{
	{"customer_last_idx", tpcc.Customer, "c_w_id, c_d_id, c_last, c_first"},
	{"orders_customer_idx", tpcc.Orders, "o_w_id, o_d_id, o_c_id, o_id"},
}

// indexWorkers is the number of connections that build indexes at once.
// Each index is one sort; indexes of different tables are independent.
const indexWorkers = 3

// indexBuildSettings apply to the index-building sessions only: a large
// sort memory, and no parallel workers inside one build (the builds
// themselves run in parallel across connections).
const indexBuildSettings = "SET maintenance_work_mem = '512MB'; SET max_parallel_maintenance_workers = 0; SET synchronous_commit = off"

// CreateTables creates the nine tables and the metadata table, without keys.
func (d *Database) CreateTables(ctx context.Context) error {
	return d.admin(ctx, "CREATE TABLE", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		for _, t := range tpcc.Tables {
			b.Queue(createTableSQL(t))
		}
		b.Queue(createMetaSQL)
		return c.SendBatch(ctx, &b).Close()
	})
}

// CreateIndexes adds the primary keys and the two secondary indexes. Each
// key is first built as a unique index (CREATE INDEX takes a SHARE lock, so
// two indexes of one table build at the same time) and then attached as
// the primary key, which needs no scan since the key columns are NOT NULL.
func (d *Database) CreateIndexes(ctx context.Context) error {
	if err := d.buildIndexes(ctx); err != nil {
		return err
	}
	return d.attachKeys(ctx)
}

// indexJob is one index build and, for a primary key, its attach.
type indexJob struct{ build, attach string }

// indexJobs are the index builds, largest first.
func indexJobs() []indexJob {
	var jobs []indexJob
	for _, pk := range primaryKeys {
		t := pk.table.String()
		jobs = append(jobs, indexJob{
			build:  fmt.Sprintf("CREATE UNIQUE INDEX %s_pkey ON %s (%s)", t, t, pk.cols),
			attach: fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_pkey PRIMARY KEY USING INDEX %s_pkey", t, t, t),
		})
	}
	for _, ix := range secondaryIndexes {
		jobs = append(jobs, indexJob{build: fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.name, ix.table, ix.cols)})
	}
	return jobs
}

// buildIndexes builds the indexes on indexWorkers connections, each
// taking the next job in order.
func (d *Database) buildIndexes(ctx context.Context) error {
	jobs := indexJobs()
	next := make(chan indexJob, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range indexWorkers {
		g.Go(func() error {
			return d.admin(gctx, "CREATE INDEX", func(c *pgx.Conn) error {
				if _, err := c.Exec(gctx, indexBuildSettings); err != nil {
					return fmt.Errorf("set index build settings: %w", err)
				}
				for j := range next {
					if _, err := c.Exec(gctx, j.build); err != nil {
						return fmt.Errorf("%s: %w", j.build, err)
					}
				}
				return nil
			})
		})
	}
	return g.Wait()
}

// attachKeys makes the unique indexes primary keys: the constraint
// check, which needs no scan (the columns are NOT NULL, the indexes
// unique).
func (d *Database) attachKeys(ctx context.Context) error {
	return d.admin(ctx, "ADD PRIMARY KEY", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		for _, j := range indexJobs() {
			if j.attach != "" {
				b.Queue(j.attach)
			}
		}
		return c.SendBatch(ctx, &b).Close()
	})
}

// HasTable reports whether a table of that name is visible on the search path.
func (d *Database) HasTable(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := d.withMeta(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok)
	})
	if err != nil {
		return false, &dialect.Error{Class: classify(err), Op: "look for table " + name, Err: err}
	}
	return ok, nil
}

// DropSchema drops the nine tables, the metadata table and the procedures.
func (d *Database) DropSchema(ctx context.Context) error {
	return d.admin(ctx, "DROP", func(c *pgx.Conn) error {
		b := pgx.Batch{}
		for _, f := range procedureNames {
			b.Queue("DROP FUNCTION IF EXISTS " + f)
		}
		for _, t := range tpcc.Tables {
			b.Queue("DROP TABLE IF EXISTS " + t.String() + " CASCADE")
		}
		b.Queue("DROP TABLE IF EXISTS " + tpcc.MetaTable)
		return c.SendBatch(ctx, &b).Close()
	})
}

// Analyze refreshes planner statistics of the nine tables, a few at a
// time, and gives each table back to autovacuum (CreateTables turned it off
// for the build).
func (d *Database) Analyze(ctx context.Context) error {
	next := make(chan string, len(tpcc.Tables)+1)
	// Largest first.
	for _, t := range []tpcc.Table{tpcc.OrderLine, tpcc.Stock, tpcc.Customer, tpcc.Orders, tpcc.History,
		tpcc.NewOrderTable, tpcc.Item, tpcc.District, tpcc.Warehouse} {
		next <- t.String()
	}
	next <- tpcc.MetaTable
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range indexWorkers {
		g.Go(func() error {
			return d.admin(gctx, "ANALYZE", func(c *pgx.Conn) error {
				for t := range next {
					if _, err := c.Exec(gctx, "ANALYZE "+t); err != nil {
						return fmt.Errorf("analyze %s: %w", t, err)
					}
					if t == tpcc.MetaTable {
						continue
					}
					if _, err := c.Exec(gctx, "ALTER TABLE "+t+" RESET (autovacuum_enabled)"); err != nil {
						return fmt.Errorf("turn autovacuum back on for %s: %w", t, err)
					}
				}
				return nil
			})
		})
	}
	return g.Wait()
}

// admin runs fn on a new connection and wraps its error as a
// *dialect.Error naming op (the kind of statement that failed: callers say
// which step of the build it was).
func (d *Database) admin(ctx context.Context, op string, fn func(c *pgx.Conn) error) error {
	c, err := d.connect(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if err := fn(c); err != nil {
		return &dialect.Error{Class: classify(err), Op: op, Err: err}
	}
	return nil
}
