package cli

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

// readSchema returns the metadata of the TPC-C schema in db, or a typed
// error saying why it cannot be served (not built, half built, built by
// another version).
func readSchema(ctx context.Context, db dialect.Database, tg dialect.Target) (tpcc.Meta, error) {
	// A few small queries: a server that takes longer has stopped answering.
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	ok, err := db.HasTable(ctx, tpcc.MetaTable)
	if err != nil {
		return tpcc.Meta{}, fmt.Errorf("look for the oltplab schema in %s: %w", tg, err)
	}
	if !ok {
		return tpcc.Meta{}, fmt.Errorf("%w in %s: run `oltplab build --target ...` first", errNoSchema, tg)
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
		return tpcc.Meta{}, withCode(exitSchema, fmt.Errorf("schema metadata in %s is incomplete (rebuild with `oltplab build --drop`): %w", tg, err))
	}
	return m, nil
}
