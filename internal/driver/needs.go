package driver

// What a run holds in this process, per virtual user and per terminal,
// so that a request the host cannot hold is refused before anything is
// allocated (scenario checks Needs against the host's free memory and the
// server's connection limit).

// VUBytes is what one virtual user (or one session of the tpc-c mode)
// holds in this process while it runs: its session (the connection and
// its buffers; an embedded database's page cache), its latency histograms,
// its terminal and its goroutine. Measured by conformance.BenchMemory (64
// virtual users on one warehouse, the Go heap and stacks in use during
// the measured window less before the run, per virtual user), on the
// private test servers:
//
//	scripts/testservers.sh run go test -run '^$' -bench 'Conformance/memory' -benchtime 1x ./internal/dialect/postgres ./internal/dialect/mysql ./internal/dialect/sqlite
//
// PostgreSQL 15: 903,680 (procedures) and 965,504 (client SQL) bytes;
// MariaDB 10.11: 910,976 and 961,664; SQLite: 1,038,336. Rounded up to
// 1 MiB. The histograms are most of it, so it hardly depends on the
// dialect.
const VUBytes = 1 << 20

// TerminalBytes is what one tpc-c terminal holds while it keys and thinks
// (no session, no histogram): BenchmarkTerminalScheduling measured 467
// bytes a terminal with 1,000 terminals and 277 with 10,000 (the
// pacer's heap); rounded up.
const TerminalBytes = 512

// Needs is what a run asks of the server and the host before it
// measures: the sessions it opens (connections, the counter reader's
// included) and the memory the driver holds for them.
type Needs struct {
	Connections int
	Bytes       int64
}

// Needs returns what a run with o (defaults resolved for warehouses)
// opens and holds.
func (o Options) Needs(warehouses int) Needs {
	o = o.ForWarehouses(warehouses)
	const counterReader = 1
	if o.Mode == ModeTPCC {
		s := int64(o.Sessions) + int64(o.DeliverySessions)
		return Needs{Connections: int(s) + counterReader, Bytes: s*VUBytes + int64(o.Terminals)*TerminalBytes}
	}
	return Needs{Connections: o.VUs + counterReader, Bytes: int64(o.VUs) * VUBytes}
}
