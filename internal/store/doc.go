// Package store is the results store: one SQLite file (modernc.org/sqlite,
// pure Go) by default, or a PostgreSQL database (pgx) that many oltplab
// processes on many hosts share, that every measuring command writes to and
// that reports, comparisons and exports read from. Both are one *Store
// with one API and one schema: the differences between the engines are a
// backend value (backend.go), not branches in the queries. It owns the schema and its ordered,
// additive migrations, and a small typed API over runs, virtual-user sweep
// profiles, HDR latency histograms, per-second samples, and experiments
// (one plan run: its schedule of (target, step) pairs with their states,
// and the runs and profiles it measured; a run that no longer counts is
// marked superseded, never deleted), and the rendezvous of a sharded run's
// driver processes (shard_arrivals: each shard's first arrival).
//
// The file is opened in WAL mode with a busy timeout and immediate write
// transactions, so several oltplab processes can write to one store at once.
// Opening is serialized between processes (a lock on the directory; in
// PostgreSQL an advisory lock), so a store several processes create at once
// is created once, whole. A store written by a newer oltplab, or one that
// fails SQLite's integrity check, or a file or PostgreSQL schema that holds
// something else, is refused and never modified.
//
// A finished run is never lost to the store: CompleteRun writes its whole
// outcome in one transaction, and CompleteDurably retries a busy store (or
// an unreachable PostgreSQL server) and meanwhile (or at last) keeps the
// outcome in a file next to the store, which Import loads once. Every run and profile records the process that
// wrote it; one left running by a process that is gone (killed, crashed)
// is marked abandoned when the store is next opened on that host.
//
// The store never holds a secret: callers redact targets before they get
// here, and CreateRun and CreateProfile refuse a target that still carries
// a password. The password of a PostgreSQL store's own URL is used to
// connect and nowhere else (Path shows the URL without it).
//
// It must not import internal/cli, internal/driver or any dialect package:
// it knows results, not how they were produced.
package store
