package load

import (
	"context"
	"fmt"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// writeMeta records the build in tpcc.MetaTable, in one transaction where
// the connection offers them. It is the last step of a build: run and
// check refuse a database without it.
func writeMeta(ctx context.Context, db dialect.Database, o Options, res Result) (err error) {
	m := tpcc.Meta{
		SchemaVersion: tpcc.SchemaVersion,
		Warehouses:    o.Warehouses,
		LoadSeed:      o.Seed,
		Load:          res.LoadConstants,
		ToolVersion:   o.ToolVersion,
		BuiltAt:       res.BuiltAt,
		Dialect:       db.Name(),
		Procedures:    res.Procedures,
	}
	if m.ToolVersion == "" {
		m.ToolVersion = "unknown"
	}
	conn, err := db.Connect(ctx)
	if err != nil {
		return fmt.Errorf("write metadata: connect: %w", err)
	}
	defer conn.Close()
	b, ok := conn.(tpcc.Beginner)
	if !ok {
		if err := tpcc.WriteMeta(ctx, conn, m); err != nil {
			return fmt.Errorf("write metadata: %w", err)
		}
		return nil
	}
	tx, err := b.Begin(ctx)
	if err != nil {
		return fmt.Errorf("write metadata: begin: %w", err)
	}
	if err := tpcc.WriteMeta(ctx, tx, m); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return fmt.Errorf("write metadata: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("write metadata: commit: %w", err)
	}
	return nil
}
