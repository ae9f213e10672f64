package tpcc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func validMeta() Meta {
	return Meta{
		SchemaVersion: SchemaVersion, Warehouses: 10, LoadSeed: 1<<63 + 5,
		Load:        Constants{CLast: 157, CID: 1023, OLIID: 0},
		ToolVersion: "v0.1.0-dev", BuiltAt: time.Date(2025, 11, 22, 6, 15, 4, 123456789, time.FixedZone("X", 3600)),
		Dialect: "sqlite", Procedures: true,
	}
}

func pairsMap(m Meta) map[string]string {
	kv := map[string]string{}
	for _, p := range m.pairs() {
		kv[p[0]] = p[1]
	}
	return kv
}

func TestMetaRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		m    Meta
	}{
		{"full", validMeta()},
		{"no procedures", func() Meta { m := validMeta(); m.Procedures = false; m.Dialect = "postgres"; return m }()},
		{"one warehouse zero seed", func() Meta { m := validMeta(); m.Warehouses = 1; m.LoadSeed = 0; return m }()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := pairsMap(c.m)
			if got, want := len(kv), len(metaKeys); got != want {
				t.Fatalf("keys: got %d, want %d", got, want)
			}
			for i, p := range c.m.pairs() {
				if p[0] != metaKeys[i] {
					t.Errorf("key %d: got %s, want %s", i, p[0], metaKeys[i])
				}
			}
			got, err := decodeMeta(kv)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !got.BuiltAt.Equal(c.m.BuiltAt) {
				t.Errorf("BuiltAt: got %v, want %v", got.BuiltAt, c.m.BuiltAt)
			}
			got.BuiltAt, c.m.BuiltAt = time.Time{}, time.Time{}
			if got != c.m {
				t.Errorf("got %+v, want %+v", got, c.m)
			}
		})
	}
}

func TestDecodeMetaErrors(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(kv map[string]string)
		wantKind SchemaErrorKind
		wantText string
	}{
		{"empty", func(kv map[string]string) { clear(kv) }, SchemaMissing, "build did not finish"},
		{"newer format", func(kv map[string]string) { kv[metaSchemaVersion] = "2" }, SchemaVersionMismatch,
			"schema format 2 was built by a newer oltplab; this one serves format 1; rebuild with --drop"},
		{"older format", func(kv map[string]string) { kv[metaSchemaVersion] = "0" }, SchemaVersionMismatch,
			"schema format 0 was built by an older oltplab"},
		{"newer format with other keys", func(kv map[string]string) { clear(kv); kv[metaSchemaVersion] = "3" }, SchemaVersionMismatch, "format 3"},
		{"no version", func(kv map[string]string) { delete(kv, metaSchemaVersion) }, SchemaIncomplete, "missing schema_version"},
		{"missing keys", func(kv map[string]string) { delete(kv, metaDialect); delete(kv, metaLoadCID) }, SchemaIncomplete,
			"missing load_c_id, dialect"},
		{"bad number", func(kv map[string]string) { kv[metaWarehouses] = "ten" }, SchemaIncomplete, `warehouses "ten" is not a number`},
		{"bad time", func(kv map[string]string) { kv[metaBuiltAt] = "yesterday" }, SchemaIncomplete, "not an RFC 3339 time"},
		{"invalid value", func(kv map[string]string) { kv[metaWarehouses] = "0" }, SchemaIncomplete, "warehouses 0 is not positive"},
		{"constant out of range", func(kv map[string]string) { kv[metaLoadCLast] = "256" }, SchemaIncomplete, "not within [0..255]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := pairsMap(validMeta())
			c.edit(kv)
			_, err := decodeMeta(kv)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SchemaError", err)
			}
			if se.Kind != c.wantKind {
				t.Errorf("kind: got %v, want %v", se.Kind, c.wantKind)
			}
			if !strings.Contains(err.Error(), c.wantText) {
				t.Errorf("message: got %q, want it to contain %q", err.Error(), c.wantText)
			}
		})
	}
}

func TestMetaValidate(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(m *Meta)
		wantErr string // "" for valid
	}{
		{"valid", func(m *Meta) {}, ""},
		{"no warehouses", func(m *Meta) { m.Warehouses = 0 }, "warehouses 0"},
		{"C_ID too large", func(m *Meta) { m.Load.CID = 1024 }, "C_ID is 1024"},
		{"OL_I_ID negative", func(m *Meta) { m.Load.OLIID = -1 }, "OL_I_ID is -1"},
		{"no tool version", func(m *Meta) { m.ToolVersion = "" }, "tool version"},
		{"no build time", func(m *Meta) { m.BuiltAt = time.Time{} }, "build time"},
		{"no dialect", func(m *Meta) { m.Dialect = "" }, "dialect"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := validMeta()
			c.edit(&m)
			err := m.Validate()
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}
