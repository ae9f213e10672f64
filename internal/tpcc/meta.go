package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the format of the schema this oltplab builds and runs
// against (tables, columns, keys, procedures). Build records it in
// MetaTable; run refuses a database built in another format.
const SchemaVersion = 1

// Meta is what build records about the database it built, in MetaTable.
type Meta struct {
	SchemaVersion int
	Warehouses    int
	LoadSeed      uint64
	// Load are the C constants of NURand the population was generated with
	// (clause 2.1.6); run draws its own against them (2.1.6.1).
	Load        Constants
	ToolVersion string
	BuiltAt     time.Time
	Dialect     string
	// Procedures: the stored procedures were installed.
	Procedures bool
}

// The keys of MetaTable, in the order WriteMeta writes them.
const (
	metaSchemaVersion = "schema_version"
	metaWarehouses    = "warehouses"
	metaLoadSeed      = "load_seed"
	metaLoadCLast     = "load_c_last"
	metaLoadCID       = "load_c_id"
	metaLoadOLIID     = "load_ol_i_id"
	metaToolVersion   = "tool_version"
	metaBuiltAt       = "built_at"
	metaDialect       = "dialect"
	metaProcedures    = "procedures"
)

var metaKeys = []string{metaSchemaVersion, metaWarehouses, metaLoadSeed, metaLoadCLast, metaLoadCID,
	metaLoadOLIID, metaToolVersion, metaBuiltAt, metaDialect, metaProcedures}

// Validate reports every field that a complete build cannot have left so.
func (m Meta) Validate() error {
	var errs []error
	if m.SchemaVersion < 1 {
		errs = append(errs, fmt.Errorf("schema version %d is not positive", m.SchemaVersion))
	}
	if m.Warehouses < 1 {
		errs = append(errs, fmt.Errorf("warehouses %d is not positive", m.Warehouses))
	}
	// TPC-C 2.1.6: C is a constant within [0 .. A] for A = 255, 1023, 8191.
	for _, c := range []struct {
		name string
		v, a int
	}{{"C_LAST", m.Load.CLast, 255}, {"C_ID", m.Load.CID, 1023}, {"OL_I_ID", m.Load.OLIID, 8191}} {
		if c.v < 0 || c.v > c.a {
			errs = append(errs, fmt.Errorf("load constant C for %s is %d, not within [0..%d]", c.name, c.v, c.a))
		}
	}
	if m.ToolVersion == "" {
		errs = append(errs, errors.New("tool version is empty"))
	}
	if m.BuiltAt.IsZero() {
		errs = append(errs, errors.New("build time is not set"))
	}
	if m.Dialect == "" {
		errs = append(errs, errors.New("dialect is empty"))
	}
	return errors.Join(errs...)
}

// pairs encodes m as the key/value rows of MetaTable, in metaKeys order.
func (m Meta) pairs() [][2]string {
	return [][2]string{
		{metaSchemaVersion, strconv.Itoa(m.SchemaVersion)},
		{metaWarehouses, strconv.Itoa(m.Warehouses)},
		{metaLoadSeed, strconv.FormatUint(m.LoadSeed, 10)},
		{metaLoadCLast, strconv.Itoa(m.Load.CLast)},
		{metaLoadCID, strconv.Itoa(m.Load.CID)},
		{metaLoadOLIID, strconv.Itoa(m.Load.OLIID)},
		{metaToolVersion, m.ToolVersion},
		{metaBuiltAt, m.BuiltAt.UTC().Format(time.RFC3339Nano)},
		{metaDialect, m.Dialect},
		{metaProcedures, strconv.FormatBool(m.Procedures)},
	}
}

// WriteMeta replaces the content of MetaTable with m, one row per key.
// The caller chooses the transaction; build writes it last, so that a
// build that did not finish leaves no (or incomplete) metadata.
func WriteMeta(ctx context.Context, q Querier, m Meta) error {
	if _, err := q.Exec(ctx, "DELETE FROM "+MetaTable); err != nil {
		return fmt.Errorf("clear %s: %w", MetaTable, err)
	}
	const insert = "INSERT INTO " + MetaTable + " (k, v) VALUES (?, ?)"
	for _, kv := range m.pairs() {
		if _, err := q.Exec(ctx, insert, kv[0], kv[1]); err != nil {
			return fmt.Errorf("write %s %s: %w", MetaTable, kv[0], err)
		}
	}
	return nil
}

// ReadMeta reads what build recorded. A database without MetaTable gives
// the driver's own error (undefined table), wrapped, for dialect.Classify;
// metadata that is empty, incomplete or of another schema format gives a
// *SchemaError.
func ReadMeta(ctx context.Context, q Querier) (Meta, error) {
	rows, err := q.Query(ctx, "SELECT k, v FROM "+MetaTable)
	if err != nil {
		return Meta{}, fmt.Errorf("read %s: %w", MetaTable, err)
	}
	kv := make(map[string]string, len(metaKeys))
	var k, v string
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return Meta{}, fmt.Errorf("read %s: %w", MetaTable, err)
		}
		kv[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Meta{}, fmt.Errorf("read %s: %w", MetaTable, err)
	}
	return decodeMeta(kv)
}

// decodeMeta is the inverse of Meta.pairs. Keys it does not know are ignored.
func decodeMeta(kv map[string]string) (Meta, error) {
	if len(kv) == 0 {
		return Meta{}, &SchemaError{Kind: SchemaMissing}
	}
	var m Meta
	sv, ok := kv[metaSchemaVersion]
	if !ok {
		return Meta{}, &SchemaError{Kind: SchemaIncomplete, Keys: []string{metaSchemaVersion}}
	}
	var err error
	if m.SchemaVersion, err = strconv.Atoi(sv); err != nil {
		return Meta{}, &SchemaError{Kind: SchemaIncomplete, Err: fmt.Errorf("%s %q is not a number", metaSchemaVersion, sv)}
	}
	// A different format may keep different keys: compare it first.
	if m.SchemaVersion != SchemaVersion {
		return Meta{}, &SchemaError{Kind: SchemaVersionMismatch, Found: m.SchemaVersion}
	}

	var missing []string
	var errs []error
	get := func(key string) (string, bool) {
		s, ok := kv[key]
		if !ok {
			missing = append(missing, key)
		}
		return s, ok
	}
	atoi := func(key string, dst *int) {
		if s, ok := get(key); ok {
			n, err := strconv.Atoi(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q is not a number", key, s))
			}
			*dst = n
		}
	}
	atoi(metaWarehouses, &m.Warehouses)
	if s, ok := get(metaLoadSeed); ok {
		if m.LoadSeed, err = strconv.ParseUint(s, 10, 64); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a number", metaLoadSeed, s))
		}
	}
	atoi(metaLoadCLast, &m.Load.CLast)
	atoi(metaLoadCID, &m.Load.CID)
	atoi(metaLoadOLIID, &m.Load.OLIID)
	m.ToolVersion, _ = get(metaToolVersion)
	if s, ok := get(metaBuiltAt); ok {
		if m.BuiltAt, err = time.Parse(time.RFC3339Nano, s); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not an RFC 3339 time", metaBuiltAt, s))
		}
	}
	m.Dialect, _ = get(metaDialect)
	if s, ok := get(metaProcedures); ok {
		if m.Procedures, err = strconv.ParseBool(s); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a boolean", metaProcedures, s))
		}
	}
	if len(missing) > 0 || len(errs) > 0 {
		return Meta{}, &SchemaError{Kind: SchemaIncomplete, Keys: missing, Err: errors.Join(errs...)}
	}
	if err := m.Validate(); err != nil {
		return Meta{}, &SchemaError{Kind: SchemaIncomplete, Err: err}
	}
	return m, nil
}

// SchemaErrorKind says what is wrong with a database's metadata.
type SchemaErrorKind int

const (
	// SchemaMissing: MetaTable is empty (a build that did not finish).
	SchemaMissing SchemaErrorKind = iota + 1
	// SchemaIncomplete: keys are missing or hold invalid values.
	SchemaIncomplete
	// SchemaVersionMismatch: the database was built in another schema format.
	SchemaVersionMismatch
)

func (k SchemaErrorKind) String() string {
	switch k {
	case SchemaMissing:
		return "missing"
	case SchemaIncomplete:
		return "incomplete"
	case SchemaVersionMismatch:
		return "version_mismatch"
	}
	return "unknown"
}

// SchemaError reports a database whose metadata does not allow a run: the
// CLI turns it into an exit code and a message without parsing text.
type SchemaError struct {
	Kind  SchemaErrorKind
	Found int      // SchemaVersionMismatch: the format the database holds
	Keys  []string // SchemaIncomplete: the keys that are missing
	Err   error    // SchemaIncomplete: values that do not parse or validate
}

func (e *SchemaError) Error() string {
	switch e.Kind {
	case SchemaMissing:
		return "the database has no oltplab metadata (" + MetaTable + " is empty): its build did not finish; rebuild with --drop"
	case SchemaIncomplete:
		var b strings.Builder
		b.WriteString("the oltplab metadata in " + MetaTable + " is incomplete")
		if len(e.Keys) > 0 {
			b.WriteString(" (missing " + strings.Join(e.Keys, ", ") + ")")
		}
		if e.Err != nil {
			b.WriteString(": " + strings.ReplaceAll(e.Err.Error(), "\n", "; "))
		}
		b.WriteString("; rebuild with --drop")
		return b.String()
	case SchemaVersionMismatch:
		who := "a newer"
		if e.Found < SchemaVersion {
			who = "an older"
		}
		return fmt.Sprintf("schema format %d was built by %s oltplab; this one serves format %d; rebuild with --drop",
			e.Found, who, SchemaVersion)
	}
	return "oltplab metadata: unknown schema error"
}

func (e *SchemaError) Unwrap() error { return e.Err }
