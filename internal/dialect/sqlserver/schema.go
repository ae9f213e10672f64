package sqlserver

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// numTables is the number of TPC-C tables (tpcc.Tables).
const numTables = int(tpcc.OrderLine) + 1

// binary is the collation of the customer's names: ORDER BY c_first
// (2.5.2.2, 2.6.2.2) sorts by code point and c_last = ? compares exactly,
// as PostgreSQL's C collation and MariaDB's utf8mb4_bin do; a server's
// default collation is usually case-insensitive. Generated data is ASCII.
const binary = " COLLATE Latin1_General_BIN2"

// tableDDL holds, per table, the column definitions (TPC-C 1.3.1, in the
// order of tpcc.Table.Columns) and the clustered primary key, created with
// the table: SQL Server stores a table's rows in its clustered index, and
// the generator emits every table in key order. Money is MONEY and rates
// SMALLMONEY, both exact to 1/10,000 (Babelfish misreads DECIMAL sent by
// bulk copy); HammerDB's SQL Server schema uses the same types.
var tableDDL = [numTables]struct {
	columns    string
	primaryKey string // empty: none (HISTORY has no key, 1.3.1)
}{
	tpcc.Item: {`i_id INT NOT NULL, i_im_id INT NOT NULL, i_name VARCHAR(24) NOT NULL,
		i_price MONEY NOT NULL, i_data VARCHAR(50) NOT NULL`, "i_id"},
	tpcc.Warehouse: {`w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, w_street_1 VARCHAR(20) NOT NULL,
		w_street_2 VARCHAR(20) NOT NULL, w_city VARCHAR(20) NOT NULL, w_state CHAR(2) NOT NULL, w_zip CHAR(9) NOT NULL,
		w_tax SMALLMONEY NOT NULL, w_ytd MONEY NOT NULL`, "w_id"},
	tpcc.Stock: {`s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT NOT NULL,
		s_dist_01 CHAR(24) NOT NULL, s_dist_02 CHAR(24) NOT NULL, s_dist_03 CHAR(24) NOT NULL, s_dist_04 CHAR(24) NOT NULL,
		s_dist_05 CHAR(24) NOT NULL, s_dist_06 CHAR(24) NOT NULL, s_dist_07 CHAR(24) NOT NULL, s_dist_08 CHAR(24) NOT NULL,
		s_dist_09 CHAR(24) NOT NULL, s_dist_10 CHAR(24) NOT NULL, s_ytd INT NOT NULL, s_order_cnt INT NOT NULL,
		s_remote_cnt INT NOT NULL, s_data VARCHAR(50) NOT NULL`, "s_w_id, s_i_id"},
	tpcc.District: {`d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10) NOT NULL,
		d_street_1 VARCHAR(20) NOT NULL, d_street_2 VARCHAR(20) NOT NULL, d_city VARCHAR(20) NOT NULL,
		d_state CHAR(2) NOT NULL, d_zip CHAR(9) NOT NULL, d_tax SMALLMONEY NOT NULL, d_ytd MONEY NOT NULL,
		d_next_o_id INT NOT NULL`, "d_w_id, d_id"},
	tpcc.Customer: {`c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL,
		c_first VARCHAR(16)` + binary + ` NOT NULL, c_middle CHAR(2) NOT NULL, c_last VARCHAR(16)` + binary + ` NOT NULL,
		c_street_1 VARCHAR(20) NOT NULL, c_street_2 VARCHAR(20) NOT NULL, c_city VARCHAR(20) NOT NULL,
		c_state CHAR(2) NOT NULL, c_zip CHAR(9) NOT NULL, c_phone CHAR(16) NOT NULL, c_since DATETIME NOT NULL,
		c_credit CHAR(2) NOT NULL, c_credit_lim MONEY NOT NULL, c_discount SMALLMONEY NOT NULL,
		c_balance MONEY NOT NULL, c_ytd_payment MONEY NOT NULL, c_payment_cnt INT NOT NULL,
		c_delivery_cnt INT NOT NULL, c_data VARCHAR(500) NOT NULL`, "c_w_id, c_d_id, c_id"},
	tpcc.History: {`h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL,
		h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME NOT NULL, h_amount MONEY NOT NULL,
		h_data VARCHAR(24) NOT NULL`, ""},
	tpcc.Orders: {`o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT NOT NULL,
		o_entry_d DATETIME NOT NULL, o_carrier_id INT NULL, o_ol_cnt INT NOT NULL, o_all_local INT NOT NULL`,
		"o_w_id, o_d_id, o_id"},
	tpcc.NewOrderTable: {`no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL`,
		"no_w_id, no_d_id, no_o_id"},
	tpcc.OrderLine: {`ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL,
		ol_i_id INT NOT NULL, ol_supply_w_id INT NOT NULL, ol_delivery_d DATETIME NULL, ol_quantity INT NOT NULL,
		ol_amount MONEY NOT NULL, ol_dist_info CHAR(24) NOT NULL`, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
}

// metaDDL is the build metadata table, the same in every dialect.
const metaDDL = "CREATE TABLE " + tpcc.MetaTable + " (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(1024) NOT NULL)"

// secondaryIndexes are added after the load, as in HammerDB's SQL Server
// schema: the customer by last name (2.5.2.2, 2.6.2.2), unique with C_ID,
// and Order-Status's last order of a customer (2.6.2.2).
var secondaryIndexes = []struct{ name, sql string }{
	{"customer_last", "CREATE UNIQUE NONCLUSTERED INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first, c_id)"},
	{"orders_customer", "CREATE NONCLUSTERED INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)"},
}

// createTableSQL is the CREATE TABLE of t with its clustered primary key.
func createTableSQL(t tpcc.Table) string {
	ddl := tableDDL[t]
	s := "CREATE TABLE " + t.String() + " (" + ddl.columns
	if ddl.primaryKey != "" {
		s += ", CONSTRAINT " + t.String() + "_pk PRIMARY KEY CLUSTERED (" + ddl.primaryKey + ")"
	}
	return s + ")"
}

// CreateTables creates the metadata table and the nine tables. DDL
// commits statement by statement, so the metadata table comes first: it
// marks every table after it as oltplab's even if the build stops halfway
// (build --drop drops only a schema that has it).
func (d *DB) CreateTables(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, metaDDL); err != nil {
		return d.wrap("create table "+tpcc.MetaTable, err)
	}
	for _, t := range tpcc.Tables {
		if _, err := d.db.ExecContext(ctx, createTableSQL(t)); err != nil {
			return d.wrap("create table "+t.String(), err)
		}
	}
	return nil
}

// CreateIndexes adds the secondary indexes, two at a time.
func (d *DB) CreateIndexes(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, ix := range secondaryIndexes {
		g.Go(func() error {
			if _, err := d.db.ExecContext(gctx, ix.sql); err != nil {
				return d.wrap("create index "+ix.name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Analyze refreshes the optimizer's statistics of every table: UPDATE
// STATISTICS on SQL Server; on Babelfish, which lacks it, sp_updatestats
// (PostgreSQL's ANALYZE of the database).
func (d *DB) Analyze(ctx context.Context) error {
	if d.srv.babelfish {
		if _, err := d.db.ExecContext(ctx, "EXEC sp_updatestats"); err != nil {
			return d.wrap("update statistics", err)
		}
		return nil
	}
	names := make([]string, 0, numTables+1)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	names = append(names, tpcc.MetaTable)
	for _, n := range names {
		if _, err := d.db.ExecContext(ctx, "UPDATE STATISTICS "+n); err != nil {
			return d.wrap("update statistics of "+n, err)
		}
	}
	return nil
}

// HasTable reports whether the target database has a user table of that
// name in the login's default schema.
func (d *DB) HasTable(ctx context.Context, name string) (bool, error) {
	var n int64
	err := d.db.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = SCHEMA_NAME() AND TABLE_NAME = @p1 AND TABLE_TYPE = 'BASE TABLE'",
		args([]any{name})...).Scan(&n)
	if err != nil {
		return false, d.wrap("look for table "+name, err)
	}
	return n > 0, nil
}

// DropSchema drops the procedures, the nine tables and, last, the metadata
// table that marks them as oltplab's. Written for SQL Server 2008, which
// has no DROP ... IF EXISTS.
func (d *DB) DropSchema(ctx context.Context) error {
	for _, p := range procedureNames {
		if _, err := d.db.ExecContext(ctx, "IF OBJECT_ID(N'"+p+"', N'P') IS NOT NULL DROP PROCEDURE "+p); err != nil {
			return d.wrap("drop procedure "+p, err)
		}
	}
	names := make([]string, 0, numTables+1)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	names = append(names, tpcc.MetaTable)
	for _, n := range names {
		if _, err := d.db.ExecContext(ctx, "IF OBJECT_ID(N'"+n+"', N'U') IS NOT NULL DROP TABLE "+n); err != nil {
			return d.wrap("drop table "+n, err)
		}
	}
	return nil
}
