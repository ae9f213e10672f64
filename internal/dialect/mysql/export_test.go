package mysql

import "github.com/oltplab/oltplab/internal/dialect"

// The variants the benchmarks (bench_test.go) measure against the
// defaults. Each sets a field of an opened *DB before it is used.

// UseInsertLoad loads with multi-row INSERT instead of LOAD DATA.
func UseInsertLoad(db dialect.Database) {
	m := loadInsert
	db.(*DB).forceLoadMode = &m
}

// UsePrimaryKeysAfterLoad adds the primary keys after the load.
func UsePrimaryKeysAfterLoad(db dialect.Database) { db.(*DB).primaryKeysAfterLoad = true }

// UseCallText sends CALLs as text instead of as prepared statements.
func UseCallText(db dialect.Database) { db.(*DB).callText = true }
