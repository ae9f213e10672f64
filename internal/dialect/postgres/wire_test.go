package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/tpcc"
)

func TestAppendTimestamp(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 27, 6, 5, 4, 3_000, time.UTC),
		time.Date(1999, 1, 2, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 12, 0, 0, 500_000, time.FixedZone("east", 5*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 1, 2, 3, 0, time.FixedZone("west", -7*3600)),
	} {
		t.Run(tm.String(), func(t *testing.T) {
			got := string(appendTimestamp([]byte("x"), tm))
			want := "x" + tm.Format("2006-01-02 15:04:05.000000")
			if got != want {
				t.Errorf("appendTimestamp = %q, want %q", got, want)
			}
		})
	}
}

// query runs one statement with parameters through the session's wire
// connection and reads its first row into dest.
func query(ctx context.Context, s *procSession, st *wireStmt, dest []any, args ...any) error {
	s.w.bind(st)
	for _, a := range args {
		s.w.paramAny(a)
	}
	s.w.execute()
	return s.call(ctx, dest...)
}

func TestWireConn(t *testing.T) {
	ctx := context.Background()
	d, _ := openTest(t)
	s := wireSessionOf(t, d)

	t.Run("round trips", func(t *testing.T) {
		var i int64
		var f float64
		var str string
		var tm time.Time
		var b bool
		var a, a2 any
		at := time.Date(2026, 11, 27, 6, 5, 4, 321_000, time.FixedZone("x", 3600))
		for _, tc := range []struct {
			sql  string
			args []any
			dest []any
			want []any // what dest points to afterwards
		}{
			{"SELECT $1::int + 1", []any{int64(41)}, []any{&i}, []any{int64(42)}},
			{"SELECT -$1::bigint", []any{int64(1) << 40}, []any{&i}, []any{-int64(1) << 40}},
			{"SELECT $1::numeric(6,2) * 2", []any{12.345}, []any{&f}, []any{24.70}},
			{"SELECT $1::varchar || 'x', $2::int", []any{"O'Brien", 7}, []any{&str, &i}, []any{"O'Brienx", int64(7)}},
			{"SELECT $1::char(4)", []any{"ab"}, []any{&str}, []any{"ab  "}},
			{"SELECT $1::timestamp", []any{at}, []any{&tm}, []any{time.Date(2026, 11, 27, 6, 5, 4, 321_000, time.UTC)}},
			{"SELECT $1::timestamp + interval '1 second'", []any{time.Date(2020, 2, 29, 23, 59, 59, 0, time.UTC)}, []any{&tm}, []any{time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)}},
			{"SELECT $1::int > 0", []any{3}, []any{&b}, []any{true}},
			{"SELECT NULL::int, $1::int", []any{nil}, []any{&a, &a2}, []any{nil, nil}},
			{"SELECT 5::int, NULL", nil, []any{&a, nil}, []any{"5", nil}},
		} {
			t.Run(tc.sql, func(t *testing.T) {
				st := &wireStmt{name: "t", sql: tc.sql}
				for round := range 2 { // parsed with the first call, only bound the second time
					if err := query(ctx, s, st, tc.dest, tc.args...); err != nil {
						t.Fatal(err)
					}
					for k, d := range tc.dest {
						if d == nil {
							continue
						}
						if got := reflect.ValueOf(d).Elem().Interface(); !reflect.DeepEqual(got, tc.want[k]) {
							t.Errorf("round %d, column %d: got %#v, want %#v", round, k+1, got, tc.want[k])
						}
					}
					if !st.parsed {
						t.Errorf("round %d: statement not marked parsed", round)
					}
				}
				// The next case prepares its own statement under the same name.
				if err := query(ctx, s, &wireStmt{name: "", sql: "DEALLOCATE t"}, nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	})

	t.Run("no rows", func(t *testing.T) {
		var i int64
		err := query(ctx, s, &wireStmt{name: "none", sql: "SELECT 1 WHERE false"}, []any{&i})
		if !errors.Is(err, tpcc.ErrNoRows) {
			t.Errorf("got %v, want tpcc.ErrNoRows", err)
		}
	})

	t.Run("several statements", func(t *testing.T) {
		// The first row of the last statement; the others skipped, the
		// same statement twice in one batch parsed once.
		st := &wireStmt{name: "gen", sql: "SELECT g FROM generate_series(1, $1::int) g"}
		s.w.bind(st)
		s.w.paramInt(3)
		s.w.execute()
		s.w.bind(st)
		s.w.paramInt(5)
		s.w.execute()
		var i int64
		if err := query(ctx, s, &wireStmt{name: "last", sql: "SELECT 10 * $1::int"}, []any{&i}, 4); err != nil || i != 40 {
			t.Fatalf("got %d, %v; want 40, nil", i, err)
		}
	})

	t.Run("server error", func(t *testing.T) {
		// A long error report (the value is quoted in it) is larger than
		// the read buffer; the session stays usable after it.
		long := &wireStmt{name: "long", sql: fmt.Sprintf("SELECT repeat('x', %d)::int", 3*wireReadSize)}
		var i int64
		err := query(ctx, s, long, []any{&i})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "22P02" || !strings.Contains(pe.Message, strings.Repeat("x", 2*wireReadSize)) {
			t.Fatalf("got %v, want invalid_text_representation quoting the value", err)
		}
		if err := query(ctx, s, &wireStmt{name: "one", sql: "SELECT 1"}, []any{&i}); err != nil || i != 1 {
			t.Fatalf("after the error: %d, %v", i, err)
		}
		undefined := &wireStmt{name: "undef", sql: "SELECT no_such_function(1)"}
		if err := query(ctx, s, undefined, nil); d.Classify(err) != dialect.ClassUndefinedObject {
			t.Errorf("Classify(%v) = %v, want %v", err, d.Classify(err), dialect.ClassUndefinedObject)
		}
		if undefined.parsed {
			t.Error("a statement that failed to parse is marked parsed")
		}
	})

	t.Run("failed transaction rolled back", func(t *testing.T) {
		// BEGIN and a failing statement in one round trip leave the
		// transaction failed ('E'): the session rolls it back.
		s.w.bind(&s.stmts.begin)
		s.w.execute()
		err := query(ctx, s, &wireStmt{name: "div", sql: "SELECT 1 / $1::int"}, nil, 0)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "22012" {
			t.Fatalf("got %v, want division_by_zero", err)
		}
		if s.w.txStatus != 'I' {
			t.Errorf("transaction status %q after the error, want 'I'", s.w.txStatus)
		}
		if err := query(ctx, s, &wireStmt{name: "two", sql: "SELECT 2"}, nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		s := wireSessionOf(t, d)
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		err := query(cctx, s, &wireStmt{name: "sleep", sql: "SELECT 1 FROM pg_sleep(30)"}, nil)
		if got := d.Classify(err); got != dialect.ClassCanceled {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassCanceled)
		}
		if err := query(ctx, s, &wireStmt{name: "one", sql: "SELECT 1"}, nil); d.Classify(err) != dialect.ClassConnection {
			t.Errorf("a call after the cancelation: %v, want a lost connection", err)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		s := wireSessionOf(t, d)
		time.AfterFunc(100*time.Millisecond, s.Interrupt)
		err := query(ctx, s, &wireStmt{name: "sleep", sql: "SELECT 1 FROM pg_sleep(30)"}, nil)
		if got := d.Classify(err); got != dialect.ClassConnection {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassConnection)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after the interrupt: %v", err)
		}
	})

	t.Run("backend terminated", func(t *testing.T) {
		s := wireSessionOf(t, d)
		var pid int64
		if err := query(ctx, s, &wireStmt{name: "pid", sql: "SELECT pg_backend_pid()"}, []any{&pid}); err != nil {
			t.Fatal(err)
		}
		if err := query(ctx, wireSessionOf(t, d), &wireStmt{name: "kill", sql: "SELECT pg_terminate_backend($1)"}, nil, pid); err != nil {
			t.Fatal(err)
		}
		err := query(ctx, s, &wireStmt{name: "one", sql: "SELECT 1"}, nil)
		if got := d.Classify(err); got != dialect.ClassConnection {
			t.Errorf("Classify(%v) = %v, want %v", err, got, dialect.ClassConnection)
		}
	})
}

// wireSessionOf opens another procedure session on d.
func wireSessionOf(t *testing.T, d *Database) *procSession {
	t.Helper()
	s, err := d.NewSession(context.Background(), dialect.StyleProcedures)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(*procSession)
}

// decodeText decodes one column through wireConn.scan, as a DataRow of
// one column whose text is v (null: NULL).
func decodeText(v []byte, null bool, dest any) error {
	row := binary.BigEndian.AppendUint16(nil, 1)
	if null {
		row = binary.BigEndian.AppendUint32(row, math.MaxUint32)
	} else {
		row = binary.BigEndian.AppendUint32(row, uint32(len(v)))
		row = append(row, v...)
	}
	w := &wireConn{row: row}
	return w.scan(dest)
}

func TestDecodeText(t *testing.T) {
	var i int64
	var tm time.Time
	var b bool
	var a any
	var d time.Duration
	for _, tc := range []struct {
		in   string
		null bool
		dest any
		want any // nil: an error is expected
	}{
		{"42", false, &i, int64(42)}, // tpcc.ScanText's
		{"", true, &i, nil},
		{"", true, &tm, nil},
		{"2026-11-27 06:05:04", false, &tm, time.Date(2026, 11, 27, 6, 5, 4, 0, time.UTC)},
		{"2026-11-27 06:05:04.5", false, &tm, time.Date(2026, 11, 27, 6, 5, 4, 500_000_000, time.UTC)},
		{"2026-11-27 06:05:04.000321", false, &tm, time.Date(2026, 11, 27, 6, 5, 4, 321_000, time.UTC)},
		{"2026-11-27 06:05:04+01", false, &tm, nil},
		{"27.11.2026 06:05:04", false, &tm, nil},
		{"2026-13-27 06:05:04", false, &tm, nil},
		{"2026-11-27 06:05:04.", false, &tm, nil},
		{"t", false, &b, true},
		{"f", false, &b, false},
		{"true", false, &b, nil},
		{"x", true, &a, nil},
		{"2026-11-27", false, &d, nil},
	} {
		t.Run(fmt.Sprintf("%q into %T", tc.in, tc.dest), func(t *testing.T) {
			err := decodeText([]byte(tc.in), tc.null, tc.dest)
			_, isAny := tc.dest.(*any)
			if tc.want == nil && !isAny {
				if err == nil {
					t.Errorf("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.ValueOf(tc.dest).Elem().Interface(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestCommandRows(t *testing.T) {
	for in, want := range map[string]int64{"INSERT 0 15\x00": 15, "UPDATE 3\x00": 3, "SELECT 1": 1, "BEGIN\x00": 0, "": 0} {
		if got := commandRows([]byte(in)); got != want {
			t.Errorf("commandRows(%q) = %d, want %d", in, got, want)
		}
	}
}
