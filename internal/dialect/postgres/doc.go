// Package postgres is oltplab's PostgreSQL dialect, on pgx v5: DDL and
// indexes (schema.go), bulk load through COPY (load.go), the five
// transactions as PL/pgSQL functions (procedures.go, procedures.sql) or as
// client-side SQL (clientsql.go), whose sessions speak the wire protocol
// themselves once pgx has connected (session.go, wire.go), plain
// connections and consistent snapshots (conn.go), the SQLSTATE classifier
// (classify.go), the database's own transaction counter (counters.go) and
// the settings and version recorded with results (settings.go), and the
// TPC-H tables, loader and query sessions (tpch.go). Opening and
// connecting is open.go.
//
// It registers itself for the "postgres" scheme. It must not import another
// dialect package, internal/driver, internal/load, internal/store or
// internal/cli.
package postgres
