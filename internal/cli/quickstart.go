package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/load"
	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/scenario"
)

const quickstartSynopsis = "quickstart [--db PATH] [--vus 1,2,4] [--rampup 3s] [--duration 10s] [-o quickstart-report.html]"

// runQuickstart is the README's first command: with no server and no
// arguments it builds one warehouse in an embedded SQLite file (or reuses
// the one a previous quickstart built), runs a short virtual-user profile,
// checks consistency and writes an HTML report.
func runQuickstart(ctx context.Context, a *app, args []string) error {
	var (
		dbPath string
		output string
		o      runOptions
	)
	fs := newFlagSet("quickstart")
	o.register(fs, a)
	fs.StringVar(&dbPath, "db", "quickstart.db", "SQLite database `FILE` to build (reused when it already holds a quickstart build)")
	fs.StringVarP(&output, "output", "o", "quickstart-report.html", "`FILE` to write the HTML report to")
	// Short defaults: a demonstration, not a measurement to publish.
	setDefault(fs, "vus", "1,2,4")
	setDefault(fs, "rampup", "3s")
	setDefault(fs, "duration", "10s")
	setDefault(fs, "grace", "5s")
	setDefault(fs, "reconnect-for", "30s")  // embedded SQLite: no server to come back
	setDefault(fs, "answer-timeout", "30s") // embedded SQLite: no connection to go silent
	setDefault(fs, "label", "quickstart")
	// The demonstration runs the tproc-c mode only: the tpc-c mode's
	// terminals take minutes per cycle.
	for _, name := range []string{"mode", "terminals", "sessions", "delivery-sessions"} {
		_ = fs.MarkHidden(name)
	}
	if err := a.parseFlags(fs, quickstartSynopsis, args); err != nil {
		return helpOK(err)
	}
	if o.target.target != a.env["OLTPLAB_TARGET"] && o.target.target != "" {
		return usageErrorf("quickstart: it always uses embedded SQLite (--db PATH); use build and run for other targets")
	}
	o.target.target = "sqlite:" + dbPath
	if o.mode != driver.ModeTPROCC.String() {
		return usageErrorf("quickstart: it runs the tproc-c mode only, not %q; for tpc-c terminals use build and run --mode tpc-c", o.mode)
	}
	if err := o.validate(); err != nil {
		return err
	}
	o.quiet = true
	// A tour shows figures: on a busy host its runs are contaminated,
	// said so and counted here, labelled (run leaves them out).
	o.include = report.Include{Contaminated: true}
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()

	tg, err := a.parseTarget(o.target)
	if err != nil {
		return err
	}
	ew := a.errw()
	db, reuse, err := openQuickstartDB(ctx, tg)
	if err != nil {
		return err
	}
	defer func() { db.Close() }()
	if reuse {
		fmt.Fprintf(ew, "reusing the 1-warehouse TPC-C database in %s (delete it to rebuild)\n", dbPath)
	} else {
		bo := buildOptions{Options: load.Options{Warehouses: 1, Workers: 1, Seed: drawSeed(), Drop: true, ToolVersion: version()}}
		if _, err := a.build(ctx, st, db, tg, bo, ew); err != nil {
			return err
		}
	}
	fmt.Fprintf(ew, "running %s virtual users: %s ramp-up and %s measured each, no think time\n", o.vus, o.driver.Rampup, o.driver.Duration)
	out, measuredErr := a.profile(ctx, st, db, tg, o)
	// A suspect run, one with too many failures, or a contaminated one, is stored and shown:
	// the quickstart still checks and reports, and exits with its code at
	// the end.
	var suspect *scenario.SuspectError
	var failures *scenario.FailuresError
	var contaminated *scenario.ContaminatedError
	if measuredErr != nil && !errors.As(measuredErr, &suspect) && !errors.As(measuredErr, &failures) && !errors.As(measuredErr, &contaminated) {
		return measuredErr
	}
	if err := a.check(ctx, st, db, tg, false); err != nil {
		return err
	}
	ps, err := results.LoadProfiles(ctx, st, []string{fmt.Sprint(out.ID)}, o.include)
	if err != nil {
		return err
	}
	in := report.Input{Title: "oltplab quickstart", Generated: time.Now().UTC(), Version: version(), Profiles: ps}
	if err := writeFileAtomic(ctx, output, func(w io.Writer) error { return report.HTML(w, in) }); err != nil {
		return err
	}
	abs, _ := filepath.Abs(output)
	fmt.Fprintf(a.out(), "\nreport: %s\n", abs)
	fmt.Fprintf(a.out(), "next: oltplab results list; oltplab build/run --target postgres://... for a real server\n")
	if contaminated != nil && errors.Is(measuredErr, contaminated) && !errors.As(measuredErr, &suspect) && !errors.As(measuredErr, &failures) {
		// Contamination alone does not fail the tour: its figures are
		// shown, counted and labelled, and the runs stay stored as
		// contaminated, which run, compare and report leave out.
		fmt.Fprintf(ew, "note: %d of %d run(s) contaminated: other processes took more of the host's CPU than allowed while they measured (above); "+
			"the quickstart counts them to show its figures, `oltplab run` leaves them out (--include-contaminated)\n",
			len(contaminated.Runs), contaminated.Total)
		return nil
	}
	return measuredErr
}

// openQuickstartDB opens the quickstart file and says whether it already
// holds a complete 1-warehouse build that can be reused. Anything else (no
// file yet, no schema, a half-built or other-scale one) is rebuilt: the
// file belongs to the quickstart.
func openQuickstartDB(ctx context.Context, tg dialect.Target) (dialect.Database, bool, error) {
	db, err := dialect.Open(ctx, tg)
	if err != nil {
		return nil, false, err
	}
	meta, err := scenario.ReadSchema(ctx, db, tg)
	return db, err == nil && meta.Warehouses == 1, nil
}
