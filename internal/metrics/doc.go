// Package metrics exposes a running profile's live figures in the
// Prometheus exposition format, with the official client library, for
// Prometheus and Grafana users who watch a run as it happens
// (`oltplab run --metrics-listen ADDR`): transactions by type and outcome,
// failures by error class, retries, latency histograms per type, the
// driver's own NOPM and TPM over the last live interval (the run so far while it is younger, updated every second), the phase, the
// virtual users and the driver process's CPU. It owns the metric names
// (names.go), the registry and the HTTP endpoint.
//
// Live figures are the driver's own counts of every transaction, ramp-up
// and grace included; the stored result (NOPM and TPM from the database's
// counters, over the measured window only) is what reports use.
//
// It implements driver.Recorder and imports driver, dialect and tpcc; it
// must not import store, scenario, cli or any dialect package.
package metrics
