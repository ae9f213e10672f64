package metrics

// Metric names, defined once: the sample Grafana dashboard
// (examples/grafana-oltplab.json) is tested to query only these.
const (
	TransactionsTotal     = "oltplab_transactions_total"
	TransactionErrors     = "oltplab_transaction_errors_total"
	TransactionRetries    = "oltplab_transaction_retries_total"
	TransactionLatency    = "oltplab_transaction_latency_seconds"
	NOPM                  = "oltplab_nopm"
	TPM                   = "oltplab_tpm"
	Phase                 = "oltplab_phase"
	VirtualUsers          = "oltplab_virtual_users"
	RunsTotal             = "oltplab_runs_total"
	DriverCPUSecondsTotal = "oltplab_driver_cpu_seconds_total"
	ProfileInfo           = "oltplab_profile_info"
)
