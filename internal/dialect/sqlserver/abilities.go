package sqlserver

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Shared code finds a dialect's optional abilities by type assertion, so a
// server's lacks must show in the type Open returns: a *DB implements what
// every server of the dialect offers, and each of the three groups below
// is added by a part embedded next to it only when the server has what the
// group needs (server.go). Eight types hold the eight combinations.

// countersPart: TPM from sys.dm_os_performance_counters, the start time
// from sys.dm_os_sys_info (counters.go).
type countersPart struct{ d *DB }

func (p countersPart) TxCount(ctx context.Context) (int64, error) { return p.d.txCount(ctx) }
func (p countersPart) TxCountSource() string                      { return txCountSource }
func (p countersPart) ServerStartTime(ctx context.Context) (time.Time, error) {
	return p.d.serverStartTime(ctx)
}

// waitsPart: wait classes from sys.dm_exec_requests and
// sys.dm_os_wait_stats (waits.go).
type waitsPart struct{ d *DB }

func (p waitsPart) OpenWaitProbe(ctx context.Context) (dialect.WaitProbe, error) {
	return p.d.openWaitProbe(ctx)
}

// enginePart: the engine's own maintenance statements: ALTER INDEX ...
// REBUILD (rebuild.go), CHECKPOINT (hygiene.go), BACKUP and RESTORE
// DATABASE (backup.go).
type enginePart struct{ d *DB }

func (p enginePart) Indexes(ctx context.Context, t tpcc.Table) ([]dialect.Index, error) {
	return p.d.indexes(ctx, t)
}
func (p enginePart) RebuildIndex(ctx context.Context, t tpcc.Table, index string) (dialect.Rebuild, error) {
	return p.d.rebuildIndex(ctx, t, index)
}
func (p enginePart) RebuildIndexes(ctx context.Context, t tpcc.Table) (dialect.Rebuild, error) {
	return p.d.rebuildIndexes(ctx, t)
}
func (p enginePart) Checkpoint(ctx context.Context) error { return p.d.checkpoint(ctx) }
func (p enginePart) ServerBackup(ctx context.Context, path string) (dialect.ServerBackup, error) {
	return p.d.serverBackup(ctx, path)
}
func (p enginePart) RestoreBackup(ctx context.Context, path, dir string) (dialect.Target, error) {
	return p.d.restoreBackup(ctx, path, dir)
}
func (p enginePart) DeleteBackup(ctx context.Context, path string) error {
	return p.d.deleteBackup(ctx, path)
}

type (
	dbC struct {
		*DB
		countersPart
	}
	dbW struct {
		*DB
		waitsPart
	}
	dbE struct {
		*DB
		enginePart
	}
	dbCW struct {
		*DB
		countersPart
		waitsPart
	}
	dbCE struct {
		*DB
		countersPart
		enginePart
	}
	dbWE struct {
		*DB
		waitsPart
		enginePart
	}
	dbCWE struct {
		*DB
		countersPart
		waitsPart
		enginePart
	}
)

// Compile-time checks: each part brings its whole group.
var (
	_ interface {
		dialect.TxCounter
		dialect.ServerStartReader
	} = countersPart{}
	_ dialect.WaitSampler = waitsPart{}
	_ interface {
		dialect.IndexRebuilder
		dialect.Checkpointer
		dialect.ServerBackuper
	} = enginePart{}
	_ dialect.Database = dbCWE{}
)

// withAbilities returns d as the type of what its server offers.
func (d *DB) withAbilities() dialect.Database {
	c, w, e := countersPart{d}, waitsPart{d}, enginePart{d}
	switch s := d.srv; {
	case s.counters() && s.waits() && s.engine():
		return dbCWE{d, c, w, e}
	case s.counters() && s.waits():
		return dbCW{d, c, w}
	case s.counters() && s.engine():
		return dbCE{d, c, e}
	case s.waits() && s.engine():
		return dbWE{d, w, e}
	case s.counters():
		return dbC{d, c}
	case s.waits():
		return dbW{d, w}
	case s.engine():
		return dbE{d, e}
	}
	return d
}
