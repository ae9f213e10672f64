// Package store is the results store that every measuring command writes
// to and that reports, comparisons and exports read from: one SQLite file
// by default, or a PostgreSQL database many oltplab processes and hosts
// share, behind one API and one schema (the engines' differences are a
// backend value, backend.go). It owns the schema and its additive
// migrations and a small typed API over runs, profiles, HDR histograms,
// per-second samples, experiments, sharded runs' rendezvous and leftovers.
// A finished run is never lost to the store, a store it does not own is
// refused and never modified, and it never holds a secret.
//
// It imports only placeholder: it knows results, not how they were
// produced (never driver, a dialect package or cli).
package store

// The SQLite file is opened in WAL mode with a busy timeout and immediate
// write transactions, so several oltplab processes can write to one store
// at once. Opening is serialized between processes (a lock on the
// directory; in PostgreSQL an advisory lock), so a store several processes
// create at once is created once, whole. A store written by a newer
// oltplab, or one that fails SQLite's integrity check, or a file or
// PostgreSQL schema that holds something else, is refused and never
// modified.
//
// CompleteRun writes a run's whole outcome in one transaction, and
// CompleteDurably retries a busy store (or an unreachable PostgreSQL
// server) and meanwhile (or at last) keeps the outcome in a file next to
// the store, which Import loads once. Every run and profile records the
// process that wrote it; one left running by a process that is gone
// (killed, crashed) is marked abandoned when the store is next opened on
// that host. A run that no longer counts is marked superseded, never
// deleted.
//
// Callers redact targets before they get here, and CreateRun and
// CreateProfile refuse a target that still carries a password. The
// password of a PostgreSQL store's own URL is used to connect and nowhere
// else (Path shows the URL without it).
