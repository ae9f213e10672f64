// Package tpcc is the TPC-C specification as code: table and column
// names (clause 1.3), the random generators and NURand (2.1.6), the
// initial population (4.3.3.1), the inputs of the five transactions
// (2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1), the mix deck (5.2.4.2), the
// emulated terminal's pacing (keying and think times, response-time
// constraints, the maximum New-Order rate of 5.2.5 and 4.2.2), the
// client-side transaction logic written against a small Querier (and
// Pipeline, the bookkeeping of a pipelined transaction that server
// dialects run it on, written against a small PipelineConn), the
// consistency conditions (3.3.2) and the audit figures (9.2).
//
// It owns no connection and no clock: durations are values, and whoever
// waits them out (internal/driver) keeps the time. It does no I/O and
// imports nothing of oltplab: reviewers hold it against the specification
// line by line.
package tpcc
