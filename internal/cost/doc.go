// Package cost owns oltplab's price/performance model (METHODOLOGY.md
// experiment 5, "CPU / licence variation"): the prices of a target
// (hardware bought and amortised, cloud instance hours, storage by
// capacity, IOPS and bandwidth, operating system, a per-core database
// licence sold in packs with a minimum per server, yearly support), their
// validation into one-line errors that name the field, and the figures
// derived from them and from measured throughput: total cost of
// ownership over a period, cost per 1,000 NOPM and per 1,000 TPM at the
// peak step and at the best step that meets a latency objective, NOPM per
// core and the cores a target NOPM needs, and savings against a baseline.
//
// Every derived figure carries the formula it came from with its inputs
// substituted, so a reader can redo it by hand. Amounts are always shown
// with their currency code; the currency is never assumed, and targets
// priced in different currencies are never compared.
//
// It is pure: plain values in, plain values out, no I/O, no clock. It
// parses a prices document from bytes the caller read with the plan
// files' strict decoder (internal/yamldoc), its only import of oltplab;
// it must not import internal/cli, internal/store, internal/driver,
// internal/dialect or any database package; callers convert their
// measurements into the Step values declared here.
package cost
