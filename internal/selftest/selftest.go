// Package selftest runs a dialect's checks at run time, against a server a
// user points oltplab at (`oltplab selftest`): what oltplab's own tests
// prove on the servers they start, proven in the field, on a scratch
// database (dialect.Scratcher) so that nothing of the user's is touched.
// It connects, builds one warehouse, runs each transaction in each
// execution style and the New-Order rollback, checks the consistency
// conditions of TPC-C 3.3.2, and tries each optional ability the dialect
// offers (the server's transaction counter and start time, wait sampling,
// CPU calibration, index rebuild, checkpoint, backup and restore). Each
// check passes, fails, or is absent: the server lacks what it needs
// (dialect.AbsenceReporter says so).
//
// It imports dialect, load and tpcc, never a dialect package, driver,
// store or cli.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/tpcc"
)

// Status is a check's outcome.
type Status int

const (
	Passed Status = iota
	// Absent: the server lacks what the check needs; not a failure.
	Absent
	// NotRun: a check it depends on failed, or it was not asked for.
	NotRun
	Failed
)

var statusNames = [...]string{"pass", "absent", "not run", "FAIL"}

func (s Status) String() string { return statusNames[s] }

// MarshalText writes the status name.
func (s Status) MarshalText() ([]byte, error) { return []byte(strings.ToLower(s.String())), nil }

// UnmarshalText reads a name MarshalText wrote.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if strings.EqualFold(string(b), n) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown selftest status %q", b)
}

// Check is one check's outcome.
type Check struct {
	Name    string  `json:"name"`
	Status  Status  `json:"status"`
	Detail  string  `json:"detail,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Options are what a selftest may do beyond its defaults.
type Options struct {
	// BackupDir is a directory on the server for the backup check of a
	// dialect.ServerBackuper; empty leaves the check not run.
	BackupDir string
	// Seed is the build's and inputs' seed.
	Seed uint64
}

// Run runs every check on db, a fresh scratch database, calling report
// after each one, and returns them all.
func Run(ctx context.Context, db dialect.Database, o Options, report func(Check)) []Check {
	r := &runner{db: db, o: o, report: report}
	if ar, ok := db.(dialect.AbsenceReporter); ok {
		r.absences = ar.Absences()
	}
	r.run(ctx)
	return r.checks
}

type runner struct {
	db       dialect.Database
	o        Options
	report   func(Check)
	checks   []Check
	absences []dialect.Absence
	c        dialect.Conn
}

// check runs fn as the check name: passed, or failed with its error.
func (r *runner) check(name string, fn func() (string, error)) bool {
	start := time.Now()
	detail, err := fn()
	c := Check{Name: name, Status: Passed, Detail: detail, Seconds: time.Since(start).Seconds()}
	if err != nil {
		c.Status, c.Detail = Failed, err.Error()
	}
	r.add(c)
	return err == nil
}

func (r *runner) add(c Check) {
	r.checks = append(r.checks, c)
	if r.report != nil {
		r.report(c)
	}
}

func (r *runner) notRun(name, why string) { r.add(Check{Name: name, Status: NotRun, Detail: why}) }

// absentFor records an absent check with what the server lacks: the
// absences whose text holds one of the words.
func (r *runner) absentFor(name string, words ...string) {
	var why []string
	for _, a := range r.absences {
		for _, w := range words {
			if strings.Contains(a.What, w) {
				why = append(why, a.What+": "+a.Instead)
				break
			}
		}
	}
	if len(why) == 0 {
		why = []string{"the " + r.db.Name() + " dialect does not offer it"}
	}
	r.add(Check{Name: name, Status: Absent, Detail: strings.Join(why, "; ")})
}

func (r *runner) run(ctx context.Context) {
	if !r.check("connect", func() (string, error) {
		c, err := r.db.Connect(ctx)
		if err != nil {
			return "", err
		}
		r.c = c
		v, err := r.db.Version(ctx)
		if err != nil {
			return "", err
		}
		s, err := r.db.Settings(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s; %d settings", v, len(s)), nil
	}) {
		r.notRun("everything else", "no connection")
		return
	}
	defer r.c.Close()

	built := r.check("build 1 warehouse", func() (string, error) {
		res, err := load.Build(ctx, r.db, load.Options{Warehouses: 1, Workers: 2, Seed: r.o.Seed, ToolVersion: "selftest"}, nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d rows in %.1f s (load %.1f s, indexes %.1f s, procedures %.1f s, statistics %.1f s)",
			res.TotalRows, res.LoadSeconds+res.IndexSeconds+res.ProceduresSeconds+res.AnalyzeSeconds,
			res.LoadSeconds, res.IndexSeconds, res.ProceduresSeconds, res.AnalyzeSeconds), r.cardinalities(ctx)
	})
	if built {
		r.check("consistency after the build (TPC-C 3.3.2)", func() (string, error) { return r.consistency(ctx, true) })
		styles := []dialect.Style{dialect.StyleClientSQL}
		if r.db.Caps().Procedures {
			styles = []dialect.Style{dialect.StyleProcedures, dialect.StyleClientSQL}
		}
		for _, st := range styles {
			r.transactions(ctx, st)
		}
		r.check("consistency after the transactions (TPC-C 3.3.2)", func() (string, error) { return r.consistency(ctx, false) })
	} else {
		r.notRun("transactions", "the build failed")
	}

	r.counters(ctx, built)
	r.waits(ctx)
	r.calibration(ctx)
	r.rebuild(ctx, built)
	r.checkpoint(ctx)
	r.backup(ctx, built)
}

// cardinalities checks the rows of TPC-C 4.3.3.1 for one warehouse.
func (r *runner) cardinalities(ctx context.Context) error {
	for _, c := range []struct {
		table string
		want  int64
	}{{"item", 100000}, {"warehouse", 1}, {"stock", 100000}, {"district", 10}, {"customer", 30000},
		{"history", 30000}, {"orders", 30000}, {"new_order", 9000}} {
		var n int64
		if err := r.c.QueryRow(ctx, "SELECT COUNT(*) FROM "+c.table).Scan(&n); err != nil {
			return err
		}
		if n != c.want {
			return fmt.Errorf("%s holds %d rows, want %d (TPC-C 4.3.3.1)", c.table, n, c.want)
		}
	}
	return nil
}

// consistency runs the twelve conditions in one snapshot.
func (r *runner) consistency(ctx context.Context, afterBuild bool) (string, error) {
	var res []tpcc.CheckResult
	err := r.db.Snapshot(ctx, func(q tpcc.Querier) error {
		var err error
		res, err = tpcc.CheckAll(ctx, q, r.db.Caps().MoneyTolerance, afterBuild)
		return err
	})
	if err != nil {
		return "", err
	}
	passed, skipped := 0, 0
	var failed []string
	for _, c := range res {
		switch {
		case c.Skipped:
			skipped++
		case c.Passed:
			passed++
		default:
			failed = append(failed, c.Clause+" "+c.Name+": "+c.Detail)
		}
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("%d conditions failed: %s", len(failed), strings.Join(failed, "; "))
	}
	if skipped > 0 {
		return fmt.Sprintf("%d conditions passed; %d not checked, holding only right after a build", passed, skipped), nil
	}
	return fmt.Sprintf("%d conditions passed", passed), nil
}

func (r *runner) int(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := r.c.QueryRow(ctx, q, args...).Scan(&n)
	return n, err
}

// transactions runs each transaction once in style st, and the New-Order
// rollback, checking what each did.
func (r *runner) transactions(ctx context.Context, st dialect.Style) {
	var s dialect.Session
	if !r.check(st.String()+": open a session", func() (string, error) {
		var err error
		s, err = r.db.NewSession(ctx, st)
		return "", err
	}) {
		return
	}
	defer s.Close()
	now := time.Now()
	r.check(st.String()+": New-Order (TPC-C 2.4)", func() (string, error) {
		next, err := r.int(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1")
		if err != nil {
			return "", err
		}
		in := &tpcc.NewOrder{WID: 1, DID: 1, CID: 7, AllLocal: true, EntryD: now, Lines: []tpcc.OrderLineInput{
			{IID: 11, SupplyWID: 1, Quantity: 3}, {IID: 12, SupplyWID: 1, Quantity: 4}, {IID: 13, SupplyWID: 1, Quantity: 5},
			{IID: 14, SupplyWID: 1, Quantity: 6}, {IID: 11, SupplyWID: 1, Quantity: 2}}}
		if err := s.NewOrder(ctx, in); err != nil {
			return "", err
		}
		after, err := r.int(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1")
		if err != nil {
			return "", err
		}
		lines, err := r.int(ctx, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = ?", next)
		if err != nil {
			return "", err
		}
		if after != next+1 || lines != 5 {
			return "", fmt.Errorf("D_NEXT_O_ID %d -> %d and %d order lines, want %d -> %d and 5", next, after, lines, next, next+1)
		}
		return fmt.Sprintf("order %d with 5 lines", next), nil
	})
	r.check(st.String()+": New-Order rollback (TPC-C 2.4.2.3)", func() (string, error) {
		next, err := r.int(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2")
		if err != nil {
			return "", err
		}
		in := &tpcc.NewOrder{WID: 1, DID: 2, CID: 8, AllLocal: true, Rollback: true, EntryD: now, Lines: []tpcc.OrderLineInput{
			{IID: 21, SupplyWID: 1, Quantity: 1}, {IID: 22, SupplyWID: 1, Quantity: 1}, {IID: 23, SupplyWID: 1, Quantity: 1},
			{IID: 24, SupplyWID: 1, Quantity: 1}, {IID: tpcc.ItemCount + 1, SupplyWID: 1, Quantity: 1}}}
		if err := s.NewOrder(ctx, in); !errors.Is(err, tpcc.ErrRollback) {
			return "", fmt.Errorf("got %v, want the rollback", err)
		}
		after, err := r.int(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2")
		if err != nil {
			return "", err
		}
		orders, err := r.int(ctx, "SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = ?", next)
		if err != nil {
			return "", err
		}
		if after != next || orders != 0 {
			return "", fmt.Errorf("D_NEXT_O_ID %d -> %d and %d orders left, want it unchanged and none", next, after, orders)
		}
		return "rolled back whole", nil
	})
	r.check(st.String()+": Payment (TPC-C 2.5)", func() (string, error) {
		before, err := r.int(ctx, "SELECT c_payment_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 9")
		if err != nil {
			return "", err
		}
		if err := s.Payment(ctx, &tpcc.Payment{WID: 1, DID: 3, CWID: 1, CDID: 3, CID: 9, Amount: 1234, HDate: now}); err != nil {
			return "", err
		}
		after, err := r.int(ctx, "SELECT c_payment_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 9")
		if err != nil {
			return "", err
		}
		if after != before+1 {
			return "", fmt.Errorf("C_PAYMENT_CNT %d -> %d, want one more", before, after)
		}
		var last string
		if err := r.c.QueryRow(ctx, "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 10").Scan(&last); err != nil {
			return "", err
		}
		if err := s.Payment(ctx, &tpcc.Payment{WID: 1, DID: 3, CWID: 1, CDID: 3, ByName: true, CLast: last, Amount: 500, HDate: now}); err != nil {
			return "", fmt.Errorf("by last name: %w", err)
		}
		return "by number and by last name", nil
	})
	r.check(st.String()+": Order-Status (TPC-C 2.6)", func() (string, error) {
		if err := s.OrderStatus(ctx, &tpcc.OrderStatus{WID: 1, DID: 1, CID: 7}); err != nil {
			return "", err
		}
		return "", nil
	})
	r.check(st.String()+": Delivery (TPC-C 2.7)", func() (string, error) {
		before, err := r.int(ctx, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1")
		if err != nil {
			return "", err
		}
		in := &tpcc.Delivery{WID: 1, CarrierID: 3, DeliveryD: now}
		if err := s.Delivery(ctx, in); err != nil {
			return "", err
		}
		after, err := r.int(ctx, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1")
		if err != nil {
			return "", err
		}
		if before-after != int64(10-in.Skipped) {
			return "", fmt.Errorf("%d NEW-ORDER rows delivered with %d districts skipped, want %d", before-after, in.Skipped, 10-in.Skipped)
		}
		return fmt.Sprintf("%d districts delivered", 10-in.Skipped), nil
	})
	r.check(st.String()+": Stock-Level (TPC-C 2.8)", func() (string, error) {
		in := &tpcc.StockLevel{WID: 1, DID: 1, Threshold: 15}
		if err := s.StockLevel(ctx, in); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d items below 15", in.LowStock), nil
	})
}

// counters: the server's transaction counter counts New-Orders, and its
// start time reads twice the same.
func (r *runner) counters(ctx context.Context, built bool) {
	tc, ok := r.db.(dialect.TxCounter)
	switch {
	case !ok:
		r.absentFor("transaction counter (TPM)", "performance_counters", "counter")
	case !built:
		r.notRun("transaction counter (TPM)", "the build failed")
	default:
		r.check("transaction counter (TPM): "+tc.TxCountSource(), func() (string, error) {
			const n = 10
			before, err := tc.TxCount(ctx)
			if err != nil {
				return "", err
			}
			s, err := r.db.NewSession(ctx, dialect.StyleClientSQL)
			if err != nil {
				return "", err
			}
			defer s.Close()
			for i := range n {
				if err := s.StockLevel(ctx, &tpcc.StockLevel{WID: 1, DID: 1 + i%10, Threshold: 10}); err != nil {
					return "", err
				}
			}
			time.Sleep(r.db.Caps().TxCountLag)
			after, err := tc.TxCount(ctx)
			if err != nil {
				return "", err
			}
			if d := after - before; d < n {
				return "", fmt.Errorf("grew by %d over %d transactions, want at least %d", d, n, n)
			}
			return fmt.Sprintf("grew by %d over %d transactions (and this check's own reads)", after-before, n), nil
		})
	}
	sr, ok := r.db.(dialect.ServerStartReader)
	if !ok {
		r.absentFor("server start time", "sys_info", "start")
		return
	}
	r.check("server start time", func() (string, error) {
		a, err := sr.ServerStartTime(ctx)
		if err != nil {
			return "", err
		}
		b, err := sr.ServerStartTime(ctx)
		if err != nil {
			return "", err
		}
		if a.IsZero() || a.After(time.Now().Add(time.Minute)) || !a.Equal(b) {
			return "", fmt.Errorf("read %v, then %v: want the same time, in the past", a, b)
		}
		return "started " + a.UTC().Format(time.RFC3339), nil
	})
}

// waits: a wait probe samples the sessions and reads the counters.
func (r *runner) waits(ctx context.Context) {
	ws, ok := r.db.(dialect.WaitSampler)
	if !ok {
		r.absentFor("wait classes", "wait", "requests", "VIEW SERVER STATE")
		return
	}
	r.check("wait classes", func() (string, error) {
		p, err := ws.OpenWaitProbe(ctx)
		if err != nil {
			return "", err
		}
		defer p.Close()
		samples, err := p.SampleWaits(ctx)
		if err != nil {
			return "", err
		}
		counters, err := p.DBCounters(ctx)
		if err != nil {
			return "", err
		}
		for _, a := range p.AvgWaits() {
			if _, ok := counters[a.TimeCounter]; !ok {
				return "", fmt.Errorf("counter %s of average %s missing from %d counters", a.TimeCounter, a.Label, len(counters))
			}
		}
		return fmt.Sprintf("%d sessions sampled, %d counters (%s)", len(samples), len(counters), p.WaitSource()), nil
	})
}

// calibration: the CPU loop in the server does CalibrationWork's work.
func (r *runner) calibration(ctx context.Context) {
	c, ok := r.db.(dialect.CPUCalibrator)
	if !ok {
		r.absentFor("CPU calibration")
		return
	}
	r.check("CPU calibration", func() (string, error) {
		const n = 20000
		got, err := c.CalibrateCPU(ctx, n)
		if err != nil {
			return "", err
		}
		x, s := dialect.CalibrationWork(n)
		if got.X != x || got.S != s {
			return "", fmt.Errorf("x %d s %q, want x %d s %q", got.X, got.S, x, s)
		}
		return fmt.Sprintf("%.0f rounds/s (%s)", got.Rate(), got.Method), nil
	})
}

// rebuild: the indexes of ORDERS rebuilt keep their rows.
func (r *runner) rebuild(ctx context.Context, built bool) {
	ir, ok := r.db.(dialect.IndexRebuilder)
	switch {
	case !ok:
		r.absentFor("index rebuild", "ALTER INDEX")
		return
	case !built:
		r.notRun("index rebuild", "the build failed")
		return
	}
	r.check("index rebuild", func() (string, error) {
		ixs, err := ir.Indexes(ctx, tpcc.OrderLine)
		if err != nil {
			return "", err
		}
		if len(ixs) == 0 || !ixs[0].Primary {
			return "", fmt.Errorf("indexes of order_line %+v: want the primary key largest", ixs)
		}
		before, err := r.int(ctx, "SELECT SUM(o_c_id) FROM orders")
		if err != nil {
			return "", err
		}
		rb, err := ir.RebuildIndexes(ctx, tpcc.Orders)
		if err != nil {
			return "", err
		}
		after, err := r.int(ctx, "SELECT SUM(o_c_id) FROM orders")
		if err != nil {
			return "", err
		}
		if after != before {
			return "", fmt.Errorf("SUM(o_c_id) %d before, %d after", before, after)
		}
		return fmt.Sprintf("order_line's largest index %s (%d bytes); %s", ixs[0].Name, ixs[0].SizeBytes, strings.Join(rb.Statements, "; ")), nil
	})
}

func (r *runner) checkpoint(ctx context.Context) {
	cp, ok := r.db.(dialect.Checkpointer)
	if !ok {
		r.absentFor("checkpoint", "CHECKPOINT")
		return
	}
	r.check("checkpoint", func() (string, error) { return "", cp.Checkpoint(ctx) })
}

// backup: a backup on the server, restored as a new database whose
// consistency is checked, then dropped and the file removed.
func (r *runner) backup(ctx context.Context, built bool) {
	sb, ok := r.db.(dialect.ServerBackuper)
	sc, isScratcher := r.db.(dialect.Scratcher)
	switch {
	case !ok || !isScratcher:
		r.absentFor("backup and restore", "BACKUP")
		return
	case !built:
		r.notRun("backup and restore", "the build failed")
		return
	case r.o.BackupDir == "":
		r.notRun("backup and restore", "give --backup-dir, a directory on the server, to run it")
		return
	}
	r.check("backup and restore", func() (string, error) {
		sep := "/"
		if strings.Contains(r.o.BackupDir, `\`) {
			sep = `\`
		}
		file := strings.TrimRight(r.o.BackupDir, `/\`) + sep + "oltplab-selftest-" + time.Now().UTC().Format("20060102T150405") + ".bak"
		b, err := sb.ServerBackup(ctx, file)
		if err != nil {
			return "", err
		}
		detail := fmt.Sprintf("%d bytes into %s", b.Bytes, b.Path)
		defer func() {
			if err := sb.DeleteBackup(context.WithoutCancel(ctx), file); err != nil {
				detail += "; " + err.Error()
			}
		}()
		tg, err := sb.RestoreBackup(ctx, file, r.o.BackupDir)
		if err != nil {
			return detail, err
		}
		defer func() { _ = sc.DropScratch(context.WithoutCancel(ctx), tg) }()
		rdb, err := dialect.Open(ctx, tg)
		if err != nil {
			return detail, fmt.Errorf("open the restored database: %w", err)
		}
		restored := &runner{db: rdb}
		c, err := rdb.Connect(ctx)
		if err == nil {
			restored.c = c
			_, err = restored.consistency(ctx, false)
			c.Close()
		}
		rdb.Close()
		if err != nil {
			return detail, fmt.Errorf("the restored database: %w", err)
		}
		return detail + "; restored as " + tg.String() + ": consistent", nil
	})
}
