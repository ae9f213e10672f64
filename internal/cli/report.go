package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/oltplab/oltplab/internal/experiment"
	"github.com/oltplab/oltplab/internal/report"
)

const reportSynopsis = "report PROFILE|MONITOR|TPCH-RESULT... -o FILE.html [--format html|md] [--include-suspect] [--include-contaminated]\n       oltplab report --experiment ID -o FILE.html [--format html|md] [--include-suspect] [--include-contaminated]"

func runReport(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		format string
		output string
		inc    report.Include
		expID  int64
	)
	fs := newFlagSet("report")
	sf.register(fs, a.env)
	registerInclude(fs, &inc)
	fs.StringVar(&format, "format", "html", "`FORMAT`: html (one self-contained file, charts work offline) or md (Markdown tables)")
	fs.StringVarP(&output, "output", "o", "", "write the report to `FILE` (default: standard output)")
	fs.Int64Var(&expID, "experiment", 0, "report experiment `ID` (see oltplab experiment list): every target overlaid, ratios to its baseline, host figures, what differs")
	refs, err := a.parseWithArgs(fs, reportSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	write := map[string]func(io.Writer, report.Input) error{"html": report.HTML, "md": report.Markdown}[format]
	if write == nil {
		return usageErrorf("report: unknown --format %q (want html or md)", format)
	}
	switch {
	case expID != 0 && len(refs) > 0:
		return usageErrorf("report: name profiles or --experiment, not both")
	case expID < 0:
		return usageErrorf("report: --experiment %d is not an experiment ID", expID)
	case expID != 0:
		err = a.renderExperiment(ctx, sf, expID, inc, output, write)
	default:
		err = a.renderProfiles(ctx, sf, refs, inc, output, write)
	}
	if err != nil {
		return err
	}
	if output != "" {
		abs, _ := filepath.Abs(output)
		fmt.Fprintf(a.errw(), "report written to %s\n", abs)
	}
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }

// renderExperiment writes an experiment's report.
func (a *app) renderExperiment(ctx context.Context, sf storeFlags, id int64, inc report.Include, output string, write func(io.Writer, report.Input) error) error {
	st, err := a.openStore(ctx, sf)
	if err != nil {
		return err
	}
	defer st.Close()
	in, err := experiment.Report(ctx, st, id, inc)
	if err != nil {
		return err
	}
	in.Generated, in.Version = time.Now().UTC(), version()
	if output == "" {
		return write(a.out(), in)
	}
	return writeFileAtomic(ctx, output, func(w io.Writer) error { return write(w, in) })
}
