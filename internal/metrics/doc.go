// Package metrics exposes a running profile's live figures in the
// Prometheus exposition format (`oltplab run --metrics-listen ADDR`):
// transactions by type and outcome, failures by error class, retries,
// latency histograms, the driver's own NOPM and TPM over the last live
// interval (the run so far while it is younger, updated every second), the
// phase, the virtual users and the driver's CPU. It owns the metric names
// (names.go), the registry and the HTTP endpoint. Live figures are the
// driver's own counts, ramp-up and grace included; reports use the stored
// result.
//
// It implements driver.Recorder and imports only driver and tpcc.
package metrics
