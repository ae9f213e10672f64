package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/oltplab/oltplab/internal/report"
)

const reportSynopsis = "report PROFILE... -o FILE.html [--format html|md]"

func runReport(ctx context.Context, a *app, args []string) error {
	var (
		sf     storeFlags
		format string
		output string
	)
	fs := newFlagSet("report")
	sf.register(fs, a.env)
	fs.StringVar(&format, "format", "html", "`FORMAT`: html (one self-contained file, charts work offline) or md (Markdown tables)")
	fs.StringVarP(&output, "output", "o", "", "write the report to `FILE` (default: standard output)")
	refs, err := a.parseWithArgs(fs, reportSynopsis, args)
	if err != nil {
		return helpOK(err)
	}
	write := map[string]func(io.Writer, report.Input) error{"html": report.HTML, "md": report.Markdown}[format]
	if write == nil {
		return usageErrorf("report: unknown --format %q (want html or md)", format)
	}
	if err := a.renderProfiles(ctx, sf, refs, output, write); err != nil {
		return err
	}
	if output != "" {
		abs, _ := filepath.Abs(output)
		fmt.Fprintf(a.errw(), "report written to %s\n", abs)
	}
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }
