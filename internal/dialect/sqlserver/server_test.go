package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oltplab/oltplab/internal/dialect"
)

// TestAbilities: the Database Open returns implements the optional
// interfaces of what its server offers, and no others, for every
// combination.
func TestAbilities(t *testing.T) {
	for _, counters := range []bool{false, true} {
		for _, waits := range []bool{false, true} {
			for _, engine := range []bool{false, true} {
				t.Run(fmt.Sprintf("counters=%v,waits=%v,engine=%v", counters, waits, engine), func(t *testing.T) {
					s := server{perfCounters: counters, sysInfo: counters,
						waitStats: waits, requests: waits, viewServerState: waits,
						alterIndex: engine, backup: engine}
					db := (&DB{srv: s}).withAbilities()
					checkAbilities(t, db, counters, waits, engine)
				})
			}
		}
	}
}

func checkAbilities(t *testing.T, db dialect.Database, counters, waits, engine bool) {
	t.Helper()
	has := func(ok bool) string {
		if ok {
			return "implements"
		}
		return "does not implement"
	}
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"dialect.TxCounter", is[dialect.TxCounter](db), counters},
		{"dialect.ServerStartReader", is[dialect.ServerStartReader](db), counters},
		{"dialect.WaitSampler", is[dialect.WaitSampler](db), waits},
		{"dialect.IndexRebuilder", is[dialect.IndexRebuilder](db), engine},
		{"dialect.Checkpointer", is[dialect.Checkpointer](db), engine},
		{"dialect.ServerBackuper", is[dialect.ServerBackuper](db), engine},
		// Always, whatever the server.
		{"dialect.ProcedureInstaller", is[dialect.ProcedureInstaller](db), true},
		{"dialect.CPUCalibrator", is[dialect.CPUCalibrator](db), true},
		{"dialect.AbsenceReporter", is[dialect.AbsenceReporter](db), true},
		{"dialect.Scratcher", is[dialect.Scratcher](db), true},
	} {
		if c.got != c.want {
			t.Errorf("%T %s %s, want it %s", db, has(c.got), c.name, strings.TrimPrefix(has(c.want), "does "))
		}
	}
}

func is[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// TestWhatTheServerLacks opens a database on the test server and checks
// what the probes found: on Babelfish, which lacks SQL Server's dynamic
// management views, ALTER INDEX and BACKUP, none of the abilities that
// need them, each absence said in one labelled line; on SQL Server
// (a login with VIEW SERVER STATE), every one.
func TestWhatTheServerLacks(t *testing.T) {
	d, db := openTest(t)
	for _, a := range d.Absences() {
		t.Logf("%s", a)
	}
	if !d.srv.babelfish {
		checkAbilities(t, db, true, true, true)
		if len(d.Absences()) != 0 {
			t.Errorf("Absences() = %v on SQL Server, want none", d.Absences())
		}
		return
	}
	checkAbilities(t, db, false, false, false)
	got := map[string]bool{}
	for _, a := range db.(dialect.AbsenceReporter).Absences() {
		got[a.What] = true
		if a.Instead == "" || !strings.HasPrefix(a.String(), "absent on this server: ") {
			t.Errorf("absence %+v: want what oltplab does instead, in a labelled line (%q)", a, a.String())
		}
	}
	for _, want := range []string{"sys.dm_os_performance_counters", "sys.dm_os_sys_info", "sys.dm_os_wait_stats",
		"sys.dm_exec_requests", "sys.dm_io_virtual_file_stats", "ALTER INDEX ... REBUILD", "BACKUP DATABASE",
		"CHECKPOINT (Babelfish accepts it and does nothing)"} {
		if !got[want] {
			t.Errorf("Absences() lacks %q: %v", want, d.Absences())
		}
	}
	// What the probes tried left nothing behind in the database.
	ctx := context.Background()
	var n int64
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES").Scan(&n); err != nil || n != 0 {
		t.Errorf("tables in the probed database: %d, %v: want none", n, err)
	}
}
