// Package cost owns oltplab's price/performance model (METHODOLOGY.md
// experiment 5): the prices of a target (hardware amortised, cloud hours,
// storage, operating system, per-core licences sold in packs with a
// minimum per server, support), their validation into one-line errors that
// name the field, and the figures derived from them and from measured
// throughput (total cost of ownership, cost per 1,000 NOPM and TPM at the
// peak and within a latency objective, NOPM per core, savings), each with
// the formula it came from. Amounts carry their currency; targets priced
// in different currencies are never compared.
//
// It is pure (no I/O, no clock) and imports only yamldoc, the strict
// decoder of prices files.
package cost
