// Package site is `oltplab serve`: a small read-only web application over
// a results store. It lists profiles, monitors, runs and experiments,
// compares any two profiles, shows the report of a profile or an
// experiment (internal/report's own HTML, with its embedded charts) and
// offers their CSV and JSON downloads. It never writes to the store.
//
// Access (access.go): without a token only requests whose Host is a
// loopback name are answered (a page elsewhere cannot reach it through
// DNS rebinding); with a token every request must carry it (compared in
// constant time). Every user string (labels, targets, errors) is escaped
// by html/template; the store holds no password to show.
//
// It imports store, results and report; it must not import cli, and it
// reaches an experiment's report through Server.ExperimentReport rather
// than importing internal/experiment.
package site
