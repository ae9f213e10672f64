// Package k8s writes the Kubernetes manifest that runs oltplab's driver as
// N shards (`oltplab k8s manifest`): an Indexed Job with one pod per
// shard, each running `oltplab run --shard I/N` with I its completion
// index, the database password from a Secret mounted as a file (the
// manifest names the Secret and never holds a password), a shared start
// instant (--start-at) and the PostgreSQL results store the shards share
// to merge into one profile (its password from a Secret too), resource
// requests, and the live metrics port for Prometheus.
//
// It writes plain YAML from its own small types (the binary carries no
// Kubernetes client); its tests decode the output strictly into the
// official API types (k8s.io/api) offline. It imports nothing of oltplab.
package k8s
