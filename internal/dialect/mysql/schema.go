package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// numTables is the number of TPC-C tables (tpcc.Tables).
const numTables = int(tpcc.OrderLine) + 1

// tableOptions: InnoDB, and a binary collation so that ORDER BY c_first
// (2.5.2.2, 2.6.2.2) sorts by byte value on every server, as PostgreSQL's
// C collation does. Generated data is ASCII.
const tableOptions = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"

// tableDDL holds, per table, the column definitions (TPC-C 1.3.1, in the
// order of tpcc.Table.Columns) and the primary key. Money is DECIMAL.
var tableDDL = [numTables]struct {
	columns    string
	primaryKey string // empty: none (HISTORY has no key, 1.3.1)
}{
	tpcc.Item: {`i_id INT NOT NULL, i_im_id INT NOT NULL, i_name VARCHAR(24) NOT NULL,
		i_price DECIMAL(5,2) NOT NULL, i_data VARCHAR(50) NOT NULL`, "i_id"},
	tpcc.Warehouse: {`w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, w_street_1 VARCHAR(20) NOT NULL,
		w_street_2 VARCHAR(20) NOT NULL, w_city VARCHAR(20) NOT NULL, w_state CHAR(2) NOT NULL, w_zip CHAR(9) NOT NULL,
		w_tax DECIMAL(4,4) NOT NULL, w_ytd DECIMAL(12,2) NOT NULL`, "w_id"},
	tpcc.Stock: {`s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT NOT NULL,
		s_dist_01 CHAR(24) NOT NULL, s_dist_02 CHAR(24) NOT NULL, s_dist_03 CHAR(24) NOT NULL, s_dist_04 CHAR(24) NOT NULL,
		s_dist_05 CHAR(24) NOT NULL, s_dist_06 CHAR(24) NOT NULL, s_dist_07 CHAR(24) NOT NULL, s_dist_08 CHAR(24) NOT NULL,
		s_dist_09 CHAR(24) NOT NULL, s_dist_10 CHAR(24) NOT NULL, s_ytd INT NOT NULL, s_order_cnt INT NOT NULL,
		s_remote_cnt INT NOT NULL, s_data VARCHAR(50) NOT NULL`, "s_w_id, s_i_id"},
	tpcc.District: {`d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10) NOT NULL,
		d_street_1 VARCHAR(20) NOT NULL, d_street_2 VARCHAR(20) NOT NULL, d_city VARCHAR(20) NOT NULL,
		d_state CHAR(2) NOT NULL, d_zip CHAR(9) NOT NULL, d_tax DECIMAL(4,4) NOT NULL, d_ytd DECIMAL(12,2) NOT NULL,
		d_next_o_id INT NOT NULL`, "d_w_id, d_id"},
	tpcc.Customer: {`c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL,
		c_first VARCHAR(16) NOT NULL, c_middle CHAR(2) NOT NULL, c_last VARCHAR(16) NOT NULL,
		c_street_1 VARCHAR(20) NOT NULL, c_street_2 VARCHAR(20) NOT NULL, c_city VARCHAR(20) NOT NULL,
		c_state CHAR(2) NOT NULL, c_zip CHAR(9) NOT NULL, c_phone CHAR(16) NOT NULL, c_since DATETIME NOT NULL,
		c_credit CHAR(2) NOT NULL, c_credit_lim DECIMAL(12,2) NOT NULL, c_discount DECIMAL(4,4) NOT NULL,
		c_balance DECIMAL(12,2) NOT NULL, c_ytd_payment DECIMAL(12,2) NOT NULL, c_payment_cnt INT NOT NULL,
		c_delivery_cnt INT NOT NULL, c_data VARCHAR(500) NOT NULL`, "c_w_id, c_d_id, c_id"},
	tpcc.History: {`h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL,
		h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME NOT NULL, h_amount DECIMAL(6,2) NOT NULL,
		h_data VARCHAR(24) NOT NULL`, ""},
	tpcc.Orders: {`o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT NOT NULL,
		o_entry_d DATETIME NOT NULL, o_carrier_id INT NULL, o_ol_cnt INT NOT NULL, o_all_local INT NOT NULL`,
		"o_w_id, o_d_id, o_id"},
	tpcc.NewOrderTable: {`no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL`,
		"no_w_id, no_d_id, no_o_id"},
	tpcc.OrderLine: {`ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL,
		ol_i_id INT NOT NULL, ol_supply_w_id INT NOT NULL, ol_delivery_d DATETIME NULL, ol_quantity INT NOT NULL,
		ol_amount DECIMAL(6,2) NOT NULL, ol_dist_info CHAR(24) NOT NULL`, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
}

// metaDDL is the build metadata table, the same in every dialect.
const metaDDL = "CREATE TABLE " + tpcc.MetaTable + " (k VARCHAR(64) PRIMARY KEY, v VARCHAR(1024) NOT NULL)" + tableOptions

// secondaryIndexes are added after the load: the customer-by-last-name
// lookup (2.5.2.2, 2.6.2.2) and Order-Status's last order of a customer
// (2.6.2.2).
var secondaryIndexes = []string{
	"ALTER TABLE customer ADD INDEX customer_last (c_w_id, c_d_id, c_last, c_first)",
	"ALTER TABLE orders ADD INDEX orders_customer (o_w_id, o_d_id, o_c_id, o_id)",
}

// createTableSQL is the CREATE TABLE of t, with its primary key unless
// it is added after the load (DB.primaryKeysAfterLoad).
func (d *DB) createTableSQL(t tpcc.Table) string {
	ddl := tableDDL[t]
	s := "CREATE TABLE " + t.String() + " (" + ddl.columns
	if ddl.primaryKey != "" && !d.primaryKeysAfterLoad {
		s += ", PRIMARY KEY (" + ddl.primaryKey + ")"
	}
	return s + ")" + tableOptions
}

// CreateTables creates the metadata table and the nine tables. DDL
// commits statement by statement here, so the metadata table comes first:
// it marks every table after it as oltplab's even if the build stops
// halfway (build --drop drops only a schema that has it).
func (d *DB) CreateTables(ctx context.Context) error {
	if _, err := d.db.ExecContext(ctx, metaDDL); err != nil {
		return d.wrap("create table "+tpcc.MetaTable, err)
	}
	for _, t := range tpcc.Tables {
		if _, err := d.db.ExecContext(ctx, d.createTableSQL(t)); err != nil {
			return d.wrap("create table "+t.String(), err)
		}
	}
	return nil
}

// CreateIndexes adds the secondary indexes (and the primary keys, when they
// were left for after the load), one table per connection in parallel.
func (d *DB) CreateIndexes(ctx context.Context) error {
	perTable := map[string][]string{}
	var order []string
	add := func(table, clause string) {
		if _, ok := perTable[table]; !ok {
			order = append(order, table)
		}
		perTable[table] = append(perTable[table], clause)
	}
	if d.primaryKeysAfterLoad {
		for _, t := range tpcc.Tables {
			if pk := tableDDL[t].primaryKey; pk != "" {
				add(t.String(), "ADD PRIMARY KEY ("+pk+")")
			}
		}
	}
	for _, s := range secondaryIndexes {
		table, clause, _ := strings.Cut(strings.TrimPrefix(s, "ALTER TABLE "), " ")
		add(table, clause)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, table := range order {
		stmt := "ALTER TABLE " + table + " " + strings.Join(perTable[table], ", ")
		g.Go(func() error {
			if _, err := d.db.ExecContext(gctx, stmt); err != nil {
				return d.wrap("index table "+table, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Analyze refreshes InnoDB's statistics of every table.
func (d *DB) Analyze(ctx context.Context) error {
	names := make([]string, 0, numTables+1)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	names = append(names, tpcc.MetaTable)
	rows, err := d.db.QueryContext(ctx, "ANALYZE TABLE "+strings.Join(names, ", "))
	if err != nil {
		return d.wrap("analyze tables", err)
	}
	defer rows.Close()
	// One row per table and message: Table, Op, Msg_type, Msg_text.
	for rows.Next() {
		var table, op, msgType, msgText sql.NullString
		if err := rows.Scan(&table, &op, &msgType, &msgText); err != nil {
			return d.wrap("analyze tables", err)
		}
		if msgType.String == "error" {
			return d.wrap("analyze tables", fmt.Errorf("%s: %s", table.String, msgText.String))
		}
	}
	if err := rows.Err(); err != nil {
		return d.wrap("analyze tables", err)
	}
	return nil
}

// HasTable reports whether the target database has a table of that name.
func (d *DB) HasTable(ctx context.Context, name string) (bool, error) {
	var n int64
	err := d.db.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", name).Scan(&n)
	if err != nil {
		return false, d.wrap("look for table "+name, err)
	}
	return n > 0, nil
}

// DropSchema drops the procedures and functions, the nine tables and, last, the metadata
// table that marks them as oltplab's.
func (d *DB) DropSchema(ctx context.Context) error {
	if err := d.dropProcedures(ctx); err != nil {
		return err
	}
	names := make([]string, 0, numTables)
	for _, t := range tpcc.Tables {
		names = append(names, t.String())
	}
	if _, err := d.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(names, ", ")); err != nil {
		return d.wrap("drop tables", err)
	}
	if _, err := d.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tpcc.MetaTable); err != nil {
		return d.wrap("drop table "+tpcc.MetaTable, err)
	}
	return nil
}
