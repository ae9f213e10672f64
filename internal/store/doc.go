// Package store is the results store: one SQLite file (modernc.org/sqlite,
// pure Go) that every measuring command writes to and that reports,
// comparisons and exports read from. It owns the schema and its ordered,
// additive migrations, and a small typed API over runs, virtual-user sweep
// profiles, HDR latency histograms, per-second samples, and experiments
// (one plan run: its schedule of (target, step) pairs with their states,
// and the runs and profiles it measured; a run that no longer counts is
// marked superseded, never deleted).
//
// The file is opened in WAL mode with a busy timeout and immediate write
// transactions, so several oltplab processes can write to one store at once.
// A store written by a newer oltplab is refused and never modified.
//
// The store never holds a secret: callers redact targets before they get
// here, and CreateRun refuses a target that still carries a password.
//
// It must not import internal/cli, internal/driver or any dialect package:
// it knows results, not how they were produced.
package store
