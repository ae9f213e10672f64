package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// adminTimeout bounds the short administrative statements a command
// sends before its work (schema metadata, version, settings).
const adminTimeout = time.Minute

// ReadSchema returns the metadata of the TPC-C schema in db, or a typed
// error saying why it cannot be served: not built (ErrNoSchema), half
// built (ErrIncompleteSchema), built by another version (*tpcc.SchemaError).
func ReadSchema(ctx context.Context, db dialect.Database, tg dialect.Target) (tpcc.Meta, error) {
	// A few small queries: a server that takes longer has stopped answering.
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	ok, err := db.HasTable(ctx, tpcc.MetaTable)
	if err != nil {
		return tpcc.Meta{}, fmt.Errorf("look for the oltplab schema in %s: %w", tg, err)
	}
	if !ok {
		return tpcc.Meta{}, fmt.Errorf("%w in %s: run `oltplab build --target ...` first", ErrNoSchema, tg)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		return tpcc.Meta{}, fmt.Errorf("connect to %s: %w", tg, err)
	}
	defer c.Close()
	m, err := tpcc.ReadMeta(ctx, c)
	if err != nil {
		return tpcc.Meta{}, fmt.Errorf("read the schema metadata of %s: %w", tg, err)
	}
	if err := m.Validate(); err != nil {
		return tpcc.Meta{}, fmt.Errorf("%w in %s (rebuild with `oltplab build --drop`): %w", ErrIncompleteSchema, tg, err)
	}
	return m, nil
}

// InitialPopulation reports whether the database still holds exactly the
// initial population's orders: D_NEXT_O_ID at 3001 everywhere (clause
// 4.3.3.1) and all 900 undelivered orders per district.
func InitialPopulation(ctx context.Context, q tpcc.Querier, meta tpcc.Meta) (bool, error) {
	var next, newOrders int64
	if err := q.QueryRow(ctx, "SELECT SUM(d_next_o_id) FROM district").Scan(&next); err != nil {
		return false, err
	}
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM new_order").Scan(&newOrders); err != nil {
		return false, err
	}
	districts := int64(meta.Warehouses * tpcc.DistrictsPerWarehouse)
	return next == districts*(tpcc.OrdersPerDistrict+1) &&
		newOrders == districts*tpcc.NewOrdersPerDistrict, nil
}
