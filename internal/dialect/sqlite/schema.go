package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// Column types. SQLite has no exact decimal: money (and the tax and
// discount rates) is REAL, compared with Caps().MoneyTolerance. Timestamps
// are TEXT 'YYYY-MM-DD HH:MM:SS' in columns declared TIMESTAMP (NUMERIC
// affinity leaves such text as TEXT), which the driver scans into time.Time.
//
// Tables with a composite primary key are WITHOUT ROWID, clustered on that
// key (TPC-C 1.3 lists the primary keys): SQLite cannot add a primary key
// after the load, and the generator emits rows in key order, so the load
// appends to each B-tree. The alternative, a rowid table plus a UNIQUE
// index built after the load, loaded slower and needs two B-tree searches
// per key lookup in the run (measured; see the package's benchmark).
// HISTORY has no primary key and stays a rowid table.
var createTables = []string{
	`CREATE TABLE item (
	i_id INTEGER PRIMARY KEY,
	i_im_id INTEGER NOT NULL,
	i_name TEXT NOT NULL,
	i_price REAL NOT NULL,
	i_data TEXT NOT NULL)`,
	`CREATE TABLE warehouse (
	w_id INTEGER PRIMARY KEY,
	w_name TEXT NOT NULL,
	w_street_1 TEXT NOT NULL,
	w_street_2 TEXT NOT NULL,
	w_city TEXT NOT NULL,
	w_state TEXT NOT NULL,
	w_zip TEXT NOT NULL,
	w_tax REAL NOT NULL,
	w_ytd REAL NOT NULL)`,
	`CREATE TABLE stock (
	s_i_id INTEGER NOT NULL,
	s_w_id INTEGER NOT NULL,
	s_quantity INTEGER NOT NULL,
	s_dist_01 TEXT NOT NULL,
	s_dist_02 TEXT NOT NULL,
	s_dist_03 TEXT NOT NULL,
	s_dist_04 TEXT NOT NULL,
	s_dist_05 TEXT NOT NULL,
	s_dist_06 TEXT NOT NULL,
	s_dist_07 TEXT NOT NULL,
	s_dist_08 TEXT NOT NULL,
	s_dist_09 TEXT NOT NULL,
	s_dist_10 TEXT NOT NULL,
	s_ytd INTEGER NOT NULL,
	s_order_cnt INTEGER NOT NULL,
	s_remote_cnt INTEGER NOT NULL,
	s_data TEXT NOT NULL,
	PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID`,
	`CREATE TABLE district (
	d_id INTEGER NOT NULL,
	d_w_id INTEGER NOT NULL,
	d_name TEXT NOT NULL,
	d_street_1 TEXT NOT NULL,
	d_street_2 TEXT NOT NULL,
	d_city TEXT NOT NULL,
	d_state TEXT NOT NULL,
	d_zip TEXT NOT NULL,
	d_tax REAL NOT NULL,
	d_ytd REAL NOT NULL,
	d_next_o_id INTEGER NOT NULL,
	PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID`,
	`CREATE TABLE customer (
	c_id INTEGER NOT NULL,
	c_d_id INTEGER NOT NULL,
	c_w_id INTEGER NOT NULL,
	c_first TEXT NOT NULL,
	c_middle TEXT NOT NULL,
	c_last TEXT NOT NULL,
	c_street_1 TEXT NOT NULL,
	c_street_2 TEXT NOT NULL,
	c_city TEXT NOT NULL,
	c_state TEXT NOT NULL,
	c_zip TEXT NOT NULL,
	c_phone TEXT NOT NULL,
	c_since TIMESTAMP NOT NULL,
	c_credit TEXT NOT NULL,
	c_credit_lim REAL NOT NULL,
	c_discount REAL NOT NULL,
	c_balance REAL NOT NULL,
	c_ytd_payment REAL NOT NULL,
	c_payment_cnt INTEGER NOT NULL,
	c_delivery_cnt INTEGER NOT NULL,
	c_data TEXT NOT NULL,
	PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID`,
	`CREATE TABLE history (
	h_c_id INTEGER NOT NULL,
	h_c_d_id INTEGER NOT NULL,
	h_c_w_id INTEGER NOT NULL,
	h_d_id INTEGER NOT NULL,
	h_w_id INTEGER NOT NULL,
	h_date TIMESTAMP NOT NULL,
	h_amount REAL NOT NULL,
	h_data TEXT NOT NULL)`,
	`CREATE TABLE orders (
	o_id INTEGER NOT NULL,
	o_d_id INTEGER NOT NULL,
	o_w_id INTEGER NOT NULL,
	o_c_id INTEGER NOT NULL,
	o_entry_d TIMESTAMP NOT NULL,
	o_carrier_id INTEGER,
	o_ol_cnt INTEGER NOT NULL,
	o_all_local INTEGER NOT NULL,
	PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID`,
	`CREATE TABLE new_order (
	no_o_id INTEGER NOT NULL,
	no_d_id INTEGER NOT NULL,
	no_w_id INTEGER NOT NULL,
	PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID`,
	`CREATE TABLE order_line (
	ol_o_id INTEGER NOT NULL,
	ol_d_id INTEGER NOT NULL,
	ol_w_id INTEGER NOT NULL,
	ol_number INTEGER NOT NULL,
	ol_i_id INTEGER NOT NULL,
	ol_supply_w_id INTEGER NOT NULL,
	ol_delivery_d TIMESTAMP,
	ol_quantity INTEGER NOT NULL,
	ol_amount REAL NOT NULL,
	ol_dist_info TEXT NOT NULL,
	PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID`,
	`CREATE TABLE ` + tpcc.MetaTable + ` (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
}

// createIndexes are the secondary indexes: customer by last name
// (TPC-C 2.5.2.2, 2.6.2.2) and the latest order of a customer (2.6.2.2).
var createIndexes = []string{
	`CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)`,
	`CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)`,
}

// adminDB opens a one-connection handle for DDL; mode "rwc" creates the
// file. The caller closes it.
func (d *Database) adminDB(mode, extra string) *sql.DB {
	db, _ := sql.Open("sqlite", dsn(d.path, mode, runSynchronous, extra)) // sql.Open only fails for an unknown driver
	db.SetMaxOpenConns(1)
	return db
}

// execAll runs stmts in one transaction on db.
func execAll(ctx context.Context, db *sql.DB, stmts []string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("%.40s...: %w", s, err)
		}
	}
	return tx.Commit()
}

// DropSchema implements dialect.Database: it drops the nine tables and the
// metadata table if present, and compacts the file when nothing else is
// left in it. A missing file has nothing to drop and is not created.
func (d *Database) DropSchema(ctx context.Context) error {
	const op = "drop schema"
	ok, err := d.fileExists()
	if err != nil || !ok {
		return err
	}
	db := d.adminDB("rw", "")
	defer db.Close()
	stmts := make([]string, 0, len(tpcc.Tables)+1)
	for _, t := range tpcc.Tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+t.String())
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS "+tpcc.MetaTable)
	if err := execAll(ctx, db, stmts); err != nil {
		return d.wrap(op, err)
	}
	var left int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&left); err != nil {
		return d.wrap(op, err)
	}
	if left == 0 {
		// Return the freed pages to the file system; an empty database
		// vacuums in no time.
		if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
			return d.wrap(op+": vacuum", err)
		}
	}
	return nil
}

// CreateTables implements dialect.Database. It creates the file if needed
// (in WAL mode) and fails if a table already exists.
func (d *Database) CreateTables(ctx context.Context) error {
	db := d.adminDB("rwc", "")
	defer db.Close()
	if err := execAll(ctx, db, createTables); err != nil {
		return d.wrap("create tables", err)
	}
	return nil
}

// CreateIndexes implements dialect.Database.
func (d *Database) CreateIndexes(ctx context.Context) error {
	const op = "create indexes"
	if err := d.exists(op); err != nil {
		return err
	}
	db := d.adminDB("rw", fmt.Sprintf("&_pragma=cache_size(-%d)&_pragma=temp_store(memory)", loadCacheKiB))
	defer db.Close()
	if err := execAll(ctx, db, createIndexes); err != nil {
		return d.wrap(op, err)
	}
	return nil
}

// Analyze implements dialect.Database.
func (d *Database) Analyze(ctx context.Context) error {
	const op = "analyze"
	if err := d.exists(op); err != nil {
		return err
	}
	if _, err := d.db.ExecContext(ctx, "ANALYZE"); err != nil {
		return d.wrap(op, err)
	}
	return nil
}
