package sqlserver

import (
	"context"
	"fmt"
	"strconv"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// maxBulkRows bounds one bulk copy.
const maxBulkRows = 100000

// bulkAttempts is how often a bulk copy is started before the load fails.
const bulkAttempts = 3

// loader streams rows into the tables with TDS bulk copy (INSERT BULK,
// go-mssqldb's Bulk), one table at a time: the generator emits each table
// in long runs (tpcc.Generator.Warehouse), and a bulk copy ends when the
// table changes or holds maxBulkRows rows. Each row is encoded as it is
// added. Babelfish 4.3 now and then refuses the start of a bulk copy that
// follows another on the same connection ("the incoming tabular data
// stream (TDS) Bulk Load Request (BulkLoadBCP) protocol stream is
// incorrect": 2 of 12 warehouses loaded with two loaders, each warehouse
// about 60 bulk copies; a load then failed): a bulk copy refused at its
// start, before any of its rows left, is started again on a new
// connection (the same loads then gave every table its exact row count).
// One that fails later is not sent again: Babelfish commits a bulk copy's
// rows as they arrive, so part of it may be in (the build fails; build
// --drop starts over). The connection is the loader's own,
// from the driver, not from database/sql's pool: a bulk copy spans many
// calls, which database/sql's Raw does not allow.
type loader struct {
	d     *DB
	c     *mssql.Conn
	bulk  *mssql.Bulk
	table tpcc.Table
	rows  int   // rows added to the current bulk copy
	vals  []any // the row being added
	err   error // the first failure; later calls return it
}

// NewLoader opens one load connection.
func (d *DB) NewLoader(ctx context.Context) (dialect.Loader, error) {
	c, err := d.driverConn(ctx)
	if err != nil {
		return nil, d.wrap("open load connection", err)
	}
	return &loader{d: d, c: c, vals: make([]any, 0, 24)}, nil
}

// driverConn opens a connection of the driver's own, outside the pool.
func (d *DB) driverConn(ctx context.Context) (*mssql.Conn, error) {
	dc, err := d.connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c, ok := dc.(*mssql.Conn)
	if !ok {
		_ = dc.Close()
		return nil, fmt.Errorf("the driver's connection is a %T, not a *mssql.Conn", dc)
	}
	return c, nil
}

// Add encodes r into the bulk copy of its table, ending the one of
// another table first.
func (l *loader) Add(ctx context.Context, r tpcc.Row) error {
	if l.err != nil {
		return l.err
	}
	t := r.Table()
	if l.bulk != nil && (t != l.table || l.rows >= maxBulkRows) {
		if err := l.done(); err != nil {
			return err
		}
	}
	l.vals = bulkValues(r.AppendArgs(l.vals[:0]))
	if l.bulk == nil {
		return l.start(ctx, t)
	}
	if err := l.bulk.AddRow(l.vals); err != nil {
		l.err = l.d.wrap("bulk copy into "+t.String(), err)
		return l.err
	}
	l.rows++
	return nil
}

// start starts a bulk copy into t with the row in l.vals; one refused at
// its start is started again on a new connection, bulkAttempts times at
// most.
func (l *loader) start(ctx context.Context, t tpcc.Table) error {
	for attempt := 1; ; attempt++ {
		l.table, l.rows = t, 0
		l.bulk = l.c.CreateBulkContext(ctx, t.String(), t.Columns())
		err := l.bulk.AddRow(l.vals)
		if err == nil {
			l.rows = 1
			return nil
		}
		if attempt == bulkAttempts || ctx.Err() != nil {
			l.err = l.d.wrap("bulk copy into "+t.String(), err)
			return l.err
		}
		l.d.log.Debug("sqlserver: bulk copy started again on a new connection", "table", t.String(), "err", err)
		_ = l.c.Close()
		c, cerr := l.d.driverConn(ctx)
		if cerr != nil {
			l.err = l.d.wrap("reconnect to load "+t.String(), cerr)
			return l.err
		}
		l.c = c
	}
}

// bulkValues converts a row's values for go-mssqldb's bulk copy, which
// takes MONEY and SMALLMONEY as text only: every float64 of a generated
// row is money or a rate (tpcc.Row.AppendArgs), written with the four
// decimals both types hold.
func bulkValues(vals []any) []any {
	for i, v := range vals {
		if x, ok := v.(float64); ok {
			vals[i] = strconv.FormatFloat(x, 'f', 4, 64)
		}
	}
	return vals
}

// done ends the current bulk copy, which commits its rows.
func (l *loader) done() error {
	b := l.bulk
	l.bulk = nil
	if _, err := b.Done(); err != nil {
		l.err = l.d.wrap("bulk copy into "+l.table.String(), err)
		return l.err
	}
	return nil
}

// Close ends the last bulk copy and closes the connection.
func (l *loader) Close(ctx context.Context) error {
	var err error
	if l.err == nil && l.bulk != nil {
		err = l.done()
	}
	if cerr := l.c.Close(); err == nil && l.err == nil {
		err = cerr
	}
	if err == nil {
		err = l.err
	}
	return err
}
