package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/selftest"
)

const selftestSynopsis = `selftest --target URL [--backup-dir DIR] [--json]

Checks, on your own server, what oltplab's tests cannot: its tests of the SQL
Server dialect run on Babelfish for PostgreSQL (TDS and much of T-SQL), which
is not SQL Server. selftest creates a scratch database on the target's server
(named oltplab_selftest_..., marked as oltplab's), builds 1 warehouse in it,
runs each transaction in each style and the New-Order rollback, checks the
consistency conditions of TPC-C 3.3.2, and tries each of the server's figures
and commands oltplab uses: the transaction counter for TPM, the server's start
time, the wait classes, the CPU calibration loop, an index rebuild, a
checkpoint, and with --backup-dir a backup, its restore as a second scratch
database and that one's consistency. It prints each check as pass, absent (the
server lacks what it needs: a view, a command, a permission) or FAIL, then
drops what it created, only databases carrying its mark; it touches no other
database and stores nothing.

The target names the database the login connects to first (master will do):
sqlserver://USER@HOST:PORT?database=master. The login needs CREATE DATABASE
(dbcreator); the figures need VIEW SERVER STATE; backups need sysadmin or
db_backupoperator and a directory on the server (--backup-dir, with the
server's own path separators). Exit 0 when no check failed, 23 otherwise.`

// selftestOptions are the flags of `oltplab selftest`.
type selftestOptions struct {
	target    targetFlags
	backupDir string
	json      bool
}

func runSelftest(ctx context.Context, a *app, args []string) error {
	var o selftestOptions
	fs := newFlagSet("selftest")
	o.target.register(fs, a.env)
	fs.StringVar(&o.backupDir, "backup-dir", "", "a directory `DIR` on the server for the backup check (the server's path; none: the check is not run)")
	fs.BoolVar(&o.json, "json", false, "print the checks as JSON")
	if err := a.parseFlags(fs, selftestSynopsis, args); err != nil {
		return helpOK(err)
	}
	admin, tg, err := a.openTarget(ctx, o.target)
	if err != nil {
		return err
	}
	defer admin.Close()
	sc, ok := admin.(dialect.Scratcher)
	if !ok {
		return usageErrorf("selftest: the %s dialect cannot make a scratch database to test in (supported: the sqlserver dialect)", admin.Name())
	}
	scratch, err := sc.CreateScratch(ctx)
	if err != nil {
		return err
	}
	w := a.out()
	if !o.json {
		fmt.Fprintf(w, "selftest of %s in the scratch database %s\n", tg, scratch)
	}
	checks, runErr := a.selftestIn(ctx, scratch, o)
	// The scratch database goes even when the checks were interrupted.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	dropErr := sc.DropScratch(dctx, scratch)
	if runErr != nil {
		if dropErr != nil {
			fmt.Fprintf(a.errw(), "oltplab: %v\n", dropErr)
		}
		return runErr
	}
	if dropErr != nil {
		return dropErr
	}
	counts := map[selftest.Status]int{}
	for _, c := range checks {
		counts[c.Status]++
	}
	if o.json {
		if err := writeJSON(w, map[string]any{"target": tg.String(), "scratch": scratch.String(), "checks": checks}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "selftest: %d passed, %d absent, %d not run, %d failed; the scratch database is dropped\n",
			counts[selftest.Passed], counts[selftest.Absent], counts[selftest.NotRun], counts[selftest.Failed])
	}
	if counts[selftest.Failed] > 0 {
		return errSilent{exitSelftest}
	}
	return nil
}

// selftestIn opens the scratch database and runs the checks there,
// printing each as it ends unless the output is JSON.
func (a *app) selftestIn(ctx context.Context, scratch dialect.Target, o selftestOptions) ([]selftest.Check, error) {
	db, err := dialect.Open(ctx, scratch)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	w := a.out()
	report := func(c selftest.Check) {
		if o.json {
			return
		}
		line := fmt.Sprintf("  %-7s %s", c.Status, c.Name)
		if c.Detail != "" {
			line += ": " + oneLine(c.Detail)
		}
		if c.Seconds >= 1 {
			line += fmt.Sprintf(" (%.1f s)", c.Seconds)
		}
		fmt.Fprintln(w, line)
	}
	checks := selftest.Run(ctx, db, selftest.Options{BackupDir: o.backupDir, Seed: 42}, report)
	if err := ctx.Err(); err != nil {
		return checks, err
	}
	return checks, nil
}
