#!/usr/bin/env bash
# Measures what the latency layer costs at zero delay (issue 24, goal of
# issue 30: a tier on the layer with zero delay within 10% of the bare
# directory's NOPM). As root, with FUSE; make bench runs it.
#
#  1. fio through the layer and on the bare directory, one after the other
#     (BenchmarkLayerOverhead, internal/latency): 4 KiB random reads and
#     writes with direct I/O at queue depths 1 and 8: p50/p99 latency,
#     IOPS, the layer process's CPU per I/O and fio's own.
#  2. TPC-C (tproc-c, stored procedures) on a managed PostgreSQL whose
#     data_dir is a bare directory, then on the layer with zero delays
#     (instance start --latency 0), alternately BENCH_LATENCY_REPEATS
#     times, each a fresh build of the same warehouses: NOPM, New-Order
#     p99, and the layer's figures (CPU per operation, mean latency by
#     kind) from its description.
# Prints one JSON document on stdout; progress on stderr. Environment:
# BENCH_WAREHOUSES (10), BENCH_VUS (8), BENCH_RAMPUP (30s),
# BENCH_DURATION (2m), BENCH_LATENCY_REPEATS (2), BENCH_FIO_RUNTIME (10s),
# BENCH_DIR (a directory on the disk to measure; default below /var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."

W=${BENCH_WAREHOUSES:-10}
VUS=${BENCH_VUS:-8}
RAMPUP=${BENCH_RAMPUP:-30s}
DURATION=${BENCH_DURATION:-2m}
REPEATS=${BENCH_LATENCY_REPEATS:-2}
bin=bin/oltplab
[[ -x $bin ]] || go build -o "$bin" ./cmd/oltplab
tmp=$(mktemp -d "${BENCH_DIR:-/var/tmp}/oltplab-latency-bench.XXXXXX")
chmod 755 "$tmp"
inst_pid=""
cleanup() {
	if [[ -n $inst_pid ]]; then
		kill -INT "$inst_pid" 2>/dev/null || true
		wait "$inst_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
export OLTPLAB_RESULTS=$tmp/results.db XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$XDG_RUNTIME_DIR"

echo "latency bench: fio on the bare directory and through the layer (${BENCH_FIO_RUNTIME:-10s} each)" >&2
uptime >"$tmp/uptime-fio"
OLTPLAB_BENCH_FIO_RUNTIME=${BENCH_FIO_RUNTIME:-10s} \
	go test -run '^$' -bench BenchmarkLayerOverhead -benchtime 1x -timeout 0 ./internal/latency >"$tmp/fio.txt"

# start_instance NAME DIR [FLAGS]: a managed PostgreSQL in the background;
# sets inst_pid, target and pwfile.
start_instance() {
	local name=$1 dir=$2
	shift 2
	"$bin" instance start --engine postgres --name "$name" --data-dir "$dir" --memory 1GiB --max-connections 40 \
		--set max_wal_size=4GB --set checkpoint_timeout=15min "$@" >"$tmp/$name.out" 2>&1 &
	inst_pid=$!
	for _ in $(seq 1 600); do
		grep -q "^  password file:" "$tmp/$name.out" 2>/dev/null && break
		kill -0 "$inst_pid" 2>/dev/null || { cat "$tmp/$name.out" >&2; exit 1; }
		sleep 0.5
	done
	target=$(awk '/^  target:/ {print $2}' "$tmp/$name.out")
	pwfile=$(awk '/^  password file:/ {print $3}' "$tmp/$name.out")
}

stop_instance() {
	kill -INT "$inst_pid"
	wait "$inst_pid" || true
	inst_pid=""
}

for i in $(seq 1 "$REPEATS"); do
	for mode in bare layer; do
		flags=()
		[[ $mode == layer ]] && flags=(--latency 0)
		name=lb-$mode-$i
		echo "latency bench: $name: build $W warehouses, $VUS virtual users, $RAMPUP ramp-up, $DURATION measured" >&2
		start_instance "$name" "$tmp/$name" "${flags[@]}"
		"$bin" build --target "$target" --password-file "$pwfile" --warehouses "$W" --json >"$tmp/$name-build.json"
		uptime >"$tmp/$name-uptime"
		layer=$(sed -n 's/.*latency layer: .*(process \([0-9]*\);.*/\1/p' "$tmp/$name.out")
		cpu_ticks() { [[ -n $layer ]] && awk '{print $14 + $15}' "/proc/$layer/stat" || echo 0; }
		before=$(cpu_ticks)
		start=$(date +%s.%N)
		# Exit 25: stored, but contaminated. The layer's process is
		# `instance start`'s, so a run given the instance's URL counts its
		# CPU as foreign (a plan's managed target counts it as oltplab's);
		# kept, with its status and foreign CPU in the output.
		rc=0
		"$bin" run --target "$target" --password-file "$pwfile" --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" \
			--json >"$tmp/$name-run.json" || rc=$?
		[[ $rc == 0 || $rc == 25 ]] || exit "$rc"
		echo "$(( $(cpu_ticks) - before )) $(getconf CLK_TCK) $(echo "$(date +%s.%N) - $start" | bc)" >"$tmp/$name-layer-cpu"
		stop_instance
		rm -rf "${tmp:?}/$name"
	done
done

python3 - "$tmp" "$W" "$VUS" "$REPEATS" <<'PY'
import json, os, re, sys
tmp, w, vus, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = {"fio": {}, "tpcc": {"warehouses": w, "vus": vus, "runs": []}}
load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
out["fio"]["load_average_before"] = load("uptime-fio")
for line in open(os.path.join(tmp, "fio.txt")):
    if line.startswith("BenchmarkLayerOverhead"):
        f = line.split()[4:]  # after the name, the count and "N ns/op"
        for v, unit in zip(f[0::2], f[1::2]):
            m = re.match(r"([a-z]+-qd\d+)/(bare|layer)-(.*)", unit)
            if m:
                out["fio"].setdefault(m.group(1), {}).setdefault(m.group(2), {})[m.group(3)] = float(v)
nopm = {"bare": [], "layer": []}
for i in range(1, repeats + 1):
    for mode in ("bare", "layer"):
        name = f"lb-{mode}-{i}"
        doc = json.load(open(os.path.join(tmp, f"{name}-run.json")))
        r, cpu = doc["result"], (doc.get("monitor") or {}).get("cpu_use") or {}
        run = {"mode": mode, "repeat": i, "nopm": round(r["nopm"]), "tpm": round(r["tpm"]),
               "status": doc.get("status"),
               "foreign_cpu_pct": None if cpu.get("foreign_pct") is None else round(cpu["foreign_pct"], 1),
               "load_average_before": load(f"{name}-uptime")}
        for k in r.get("kinds") or []:
            if k["kind"] == "new_order":
                run["new_order_p99_ms"] = round(k["latency_micros"]["p99"] / 1000, 2)
        ticks, hz, wall = open(os.path.join(tmp, f"{name}-layer-cpu")).read().split()
        if mode == "layer":
            cpu = int(ticks) / int(hz)
            run["layer_cpu_seconds_during_run"] = round(cpu, 1)
            run["layer_cpu_cores_during_run"] = round(cpu / float(wall), 3)
            tx = r["tpm"] / 60 * float(wall)
            if tx > 0:
                run["layer_cpu_us_per_transaction"] = round(cpu * 1e6 / tx, 1)
            # What the instance printed when it stopped: the layer's
            # figures over its life (build and run).
            kinds = {}
            for line in open(os.path.join(tmp, f"{name}.out")):
                m = re.match(r"\s+(read|write|fsync|meta)\s+(\d+)\s+mean ([\d.]+) ms\s+p50 ([\d.]+) ms\s+p99 ([\d.]+) ms", line)
                if m:
                    kinds[m.group(1)] = {"count": int(m.group(2)), "mean_ms": float(m.group(3)),
                                         "p50_ms": float(m.group(4)), "p99_ms": float(m.group(5))}
                m = re.match(r"\s+cpu\s+([\d.]+) s, ([\d.]+) µs per operation", line)
                if m:
                    run["layer_cpu_us_per_op_whole_life"] = float(m.group(2))
            run["layer_ops_whole_life"] = kinds
        out["tpcc"]["runs"].append(run)
        nopm[mode].append(r["nopm"])
if nopm["bare"] and nopm["layer"]:
    b, l = sum(nopm["bare"]) / len(nopm["bare"]), sum(nopm["layer"]) / len(nopm["layer"])
    out["tpcc"]["mean_nopm_bare"] = round(b)
    out["tpcc"]["mean_nopm_layer"] = round(l)
    out["tpcc"]["layer_over_bare"] = round(l / b, 3)
out["tpcc"]["note"] = ("each run is given the instance's URL, so the layer's process (instance start's) is foreign CPU to it: "
                       "a layer run may be stored contaminated (status); a plan's managed target counts the layer with oltplab's CPU")
print(json.dumps(out, indent=2))
PY
