package tpchload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpch"
)

// SchemaVersion is the format of the TPC-H schema and its metadata; the
// tests refuse a database built in another.
const SchemaVersion = 1

// Meta is what a build records about the TPC-H database it built, in
// tpch.MetaTable, and what the refresh functions change since: ORDERS and
// LINEITEM's rows and the update sets applied, updated in the refresh
// function's own transaction, so that they are exact whatever was
// interrupted.
type Meta struct {
	SchemaVersion int        `json:"schema_version"`
	Scale         tpch.Scale `json:"scale"`
	Dialect       string     `json:"dialect"`
	ToolVersion   string     `json:"tool_version"`
	BuiltAt       time.Time  `json:"built_at"`
	// QGenSeed is the default seed of the tests' parameters: the load's
	// end as mmddhhmmss (clause 2.1.3.3).
	QGenSeed int64 `json:"qgen_seed"`
	// Orders and LineItems are the rows of ORDERS and LINEITEM now.
	Orders    int64 `json:"orders_rows"`
	LineItems int64 `json:"lineitem_rows"`
	// RF1Sets and RF2Sets are the last update sets RF1 and RF2 applied
	// (0: none): the next of each applies the set after, so that no set
	// is ever applied twice.
	RF1Sets int `json:"rf1_sets"`
	RF2Sets int `json:"rf2_sets"`
}

// Keys of tpch.MetaTable.
const (
	metaSchemaVersion = "schema_version"
	metaScale         = "scale"
	metaDialect       = "dialect"
	metaToolVersion   = "tool_version"
	metaQGenSeed      = "qgen_seed"
	metaOrders        = "orders_rows"
	metaLineItems     = "lineitem_rows"
	metaRF1Sets       = "rf1_sets"
	metaRF2Sets       = "rf2_sets"
	// metaBuiltAt is written last: a build without it did not finish.
	metaBuiltAt = "built_at"
)

// LoadSeed is the qgen seed clause 2.1.3.3 takes from the time stamp of
// the end of the load: mmddhhmmss.
func LoadSeed(t time.Time) int64 {
	t = t.UTC()
	return int64(t.Month())*100000000 + int64(t.Day())*1000000 + int64(t.Hour())*10000 + int64(t.Minute())*100 + int64(t.Second())
}

func (m Meta) pairs() [][2]string {
	return [][2]string{
		{metaSchemaVersion, strconv.Itoa(m.SchemaVersion)},
		{metaScale, m.Scale.String()},
		{metaDialect, m.Dialect},
		{metaToolVersion, m.ToolVersion},
		{metaQGenSeed, strconv.FormatInt(m.QGenSeed, 10)},
		{metaOrders, strconv.FormatInt(m.Orders, 10)},
		{metaLineItems, strconv.FormatInt(m.LineItems, 10)},
		{metaRF1Sets, strconv.Itoa(m.RF1Sets)},
		{metaRF2Sets, strconv.Itoa(m.RF2Sets)},
		{metaBuiltAt, m.BuiltAt.UTC().Format(time.RFC3339)},
	}
}

// writeMeta records m, built_at last.
func writeMeta(ctx context.Context, db dialect.Database, m Meta) error {
	if m.ToolVersion == "" {
		m.ToolVersion = "unknown"
	}
	c, err := db.Connect(ctx)
	if err != nil {
		return fmt.Errorf("write the TPC-H metadata: connect: %w", err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "DELETE FROM "+tpch.MetaTable); err != nil {
		return fmt.Errorf("clear %s: %w", tpch.MetaTable, err)
	}
	for _, kv := range m.pairs() {
		if _, err := c.Exec(ctx, "INSERT INTO "+tpch.MetaTable+" (k, v) VALUES (?, ?)", kv[0], kv[1]); err != nil {
			return fmt.Errorf("write %s %s: %w", tpch.MetaTable, kv[0], err)
		}
	}
	return nil
}

var (
	// ErrNoSchema: the target holds no oltplab TPC-H schema.
	ErrNoSchema = errors.New("no oltplab TPC-H schema")
	// ErrIncompleteSchema: the schema's build did not finish, or its
	// metadata is of another format.
	ErrIncompleteSchema = errors.New("the TPC-H schema is incomplete")
)

// ReadMeta reads what the build and the refresh functions recorded. A
// target without tpch.MetaTable gives ErrNoSchema; a build that did not
// finish, or metadata of another format, ErrIncompleteSchema.
func ReadMeta(ctx context.Context, db dialect.Database) (Meta, error) {
	ok, err := db.HasTable(ctx, tpch.MetaTable)
	if err != nil {
		return Meta{}, fmt.Errorf("look for table %s: %w", tpch.MetaTable, err)
	}
	if !ok {
		return Meta{}, ErrNoSchema
	}
	c, err := db.Connect(ctx)
	if err != nil {
		return Meta{}, fmt.Errorf("read the TPC-H metadata: connect: %w", err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT k, v FROM "+tpch.MetaTable)
	if err != nil {
		return Meta{}, fmt.Errorf("read %s: %w", tpch.MetaTable, err)
	}
	defer rows.Close()
	kv := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return Meta{}, fmt.Errorf("read %s: %w", tpch.MetaTable, err)
		}
		kv[k] = v
	}
	if err := rows.Err(); err != nil {
		return Meta{}, fmt.Errorf("read %s: %w", tpch.MetaTable, err)
	}
	return parseMeta(kv)
}

func parseMeta(kv map[string]string) (Meta, error) {
	var m Meta
	if kv[metaBuiltAt] == "" {
		return m, fmt.Errorf("%w: its build did not finish", ErrIncompleteSchema)
	}
	var errs []error
	num := func(k string) int64 {
		n, err := strconv.ParseInt(kv[k], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q", k, kv[k]))
		}
		return n
	}
	m.SchemaVersion = int(num(metaSchemaVersion))
	if len(errs) == 0 && m.SchemaVersion != SchemaVersion {
		return m, fmt.Errorf("%w: built in format %d by another oltplab (this one uses %d; rebuild with --drop)",
			ErrIncompleteSchema, m.SchemaVersion, SchemaVersion)
	}
	s, err := tpch.ParseScale(kv[metaScale])
	if err != nil {
		errs = append(errs, err)
	}
	m.Scale = s
	m.Dialect, m.ToolVersion = kv[metaDialect], kv[metaToolVersion]
	m.QGenSeed = num(metaQGenSeed)
	m.Orders, m.LineItems = num(metaOrders), num(metaLineItems)
	m.RF1Sets, m.RF2Sets = int(num(metaRF1Sets)), int(num(metaRF2Sets))
	if m.BuiltAt, err = time.Parse(time.RFC3339, kv[metaBuiltAt]); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return m, fmt.Errorf("%w: %w", ErrIncompleteSchema, errors.Join(errs...))
	}
	return m, nil
}

// RF1Recorded returns the statements that record, inside RF1's own
// transaction, that it applied update set u, inserting orders and lines
// rows, and m as it then is.
func (m Meta) RF1Recorded(u int, orders, lines int64) ([]string, Meta) {
	m.RF1Sets = u
	m.Orders += orders
	m.LineItems += lines
	return m.updates(metaRF1Sets, strconv.Itoa(m.RF1Sets)), m
}

// RF2Recorded is RF1Recorded for RF2, which deleted orders and lines rows.
func (m Meta) RF2Recorded(u int, orders, lines int64) ([]string, Meta) {
	m.RF2Sets = u
	m.Orders -= orders
	m.LineItems -= lines
	return m.updates(metaRF2Sets, strconv.Itoa(m.RF2Sets)), m
}

func (m Meta) updates(setKey, set string) []string {
	up := func(k, v string) string {
		return "UPDATE " + tpch.MetaTable + " SET v = '" + v + "' WHERE k = '" + k + "'"
	}
	return []string{up(setKey, set), up(metaOrders, strconv.FormatInt(m.Orders, 10)), up(metaLineItems, strconv.FormatInt(m.LineItems, 10))}
}
