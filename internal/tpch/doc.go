// Package tpch is the TPC-H specification as code: the eight tables and
// their columns (clause 1.4), scale factors and cardinalities (4.2.5), the
// population that dbgen generates (4.2.2, 4.2.3) reproduced row for row,
// the update sets of the refresh functions (2.5, 4.2.4), the substitution
// parameters that qgen draws (2.4.N.3) and their validation values
// (2.4.N.4), the 22 query texts, the query sequences of the streams
// (5.3.5.4) and the comparison of answers (2.1.3.5).
//
// It owns no connection, file or clock, does no I/O and imports nothing of
// oltplab: reviewers hold it against the specification and dbgen line by
// line.
package tpch

// The population equals dbgen's (TPC-H Tools 2.17.3) byte for byte: each
// column draws from its own Park-Miller stream, seeded as dbgen seeds it
// and advanced to a fixed boundary at the end of every row, so that any
// row range can be generated on its own after skipping the streams ahead.
// A Chunk is what dbgen -C n -S k writes; its rows equal the same rows of
// a whole-table generation. Comments come from dbgen's 300 MiB text pool
// (4.2.2.10), built once per process and shared by every Generator.
//
// Rows stream to a callback and are reused: a consumer encodes a row
// (Row.AppendTBL, Row.AppendArgs) before it returns. Query texts are
// rendered for a Flavor, the few constructs where SQL products differ
// (date arithmetic, extract, substring, row limits; clause 2.2.3.3 allows
// vendor syntax for them), which dialect packages supply as data.
