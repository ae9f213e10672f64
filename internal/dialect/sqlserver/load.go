package sqlserver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// maxBulkRows bounds one bulk copy: the rows of one INSERT BULK are one
// transaction in the server's log.
const maxBulkRows = 100000

// loader streams rows into the tables with TDS bulk copy (INSERT BULK,
// go-mssqldb's Bulk), one table at a time: the generator emits each table
// in long runs (tpcc.Generator.Warehouse), and a bulk copy ends when the
// table changes. Each row is encoded as it is added, so nothing of the
// generator's reused rows is kept. The connection is the loader's own,
// from the driver, not from database/sql's pool: a bulk copy spans many
// calls, which database/sql's Raw does not allow.
type loader struct {
	d     *DB
	c     *mssql.Conn
	ctx   context.Context
	bulk  *mssql.Bulk
	table tpcc.Table
	rows  int
	vals  []any
	err   error // the first failure; later calls return it
}

// NewLoader opens one load connection.
func (d *DB) NewLoader(ctx context.Context) (dialect.Loader, error) {
	c, err := d.driverConn(ctx)
	if err != nil {
		return nil, d.wrap("open load connection", err)
	}
	return &loader{d: d, c: c, ctx: ctx, vals: make([]any, 0, 24)}, nil
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
	if l.bulk == nil {
		l.bulk = l.c.CreateBulkContext(ctx, t.String(), t.Columns())
		l.table, l.rows = t, 0
	}
	l.vals = bulkValues(r.AppendArgs(l.vals[:0]))
	if err := l.bulk.AddRow(l.vals); err != nil {
		l.err = l.d.wrap("bulk copy into "+t.String(), err)
		return l.err
	}
	l.rows++
	return nil
}

// bulkValues converts a row's values for go-mssqldb's bulk copy, which
// takes MONEY and SMALLMONEY as text only: every float64 of a generated
// row is money or a rate (tpcc.Row.AppendArgs), written with the four
// decimals both types hold.
func bulkValues(vals []any) []any {
	for i, v := range vals {
		switch x := v.(type) {
		case float64:
			vals[i] = strconv.FormatFloat(x, 'f', 4, 64)
		case time.Time:
			vals[i] = x.UTC()
		}
	}
	return vals
}

// done ends the current bulk copy, which commits its rows.
func (l *loader) done() error {
	b, t := l.bulk, l.table
	l.bulk = nil
	if _, err := b.Done(); err != nil {
		l.err = l.d.wrap("bulk copy into "+t.String(), err)
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
