#!/usr/bin/env bash
# make bench: measures, on private servers configured for measurement
# (fsync on), the build rate of 10 warehouses and the driver's CPU per
# database transaction with 8 virtual users in both execution styles, on
# PostgreSQL and MariaDB, each run once with the sessions' raw-syscall
# sockets (package rawconn, the default) and once with plain ones
# (OLTPLAB_RAWCONN=off), so that what rawconn saves is measured again;
# then what tpc-c terminals cost the driver (BenchmarkTerminals: 1,000
# and 10,000 terminals on the PostgreSQL build, more than ten per
# warehouse, so not conforming: a measure of the driver).
# Prints one JSON document on stdout; progress on stderr. Environment:
# BENCH_WAREHOUSES (10), BENCH_VUS (8), BENCH_RAMPUP (30s),
# BENCH_DURATION (2m), BENCH_WORKERS (4), BENCH_SOCKETS ("raw plain"),
# BENCH_TERMINALS (1000,10000), BENCH_TERMINAL_WINDOW (1m). As root with
# FUSE it also measures the latency layer's overhead at zero delay
# (scripts/latency-bench.sh, its own environment; BENCH_LATENCY=0 skips
# it) and adds it as latency_layer.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} != inner ]]; then
	exec env OLTPLAB_SERVER_PROFILE=bench OLTPLAB_NEEDS_BROWSER=0 scripts/testservers.sh run "$0" inner
fi

W=${BENCH_WAREHOUSES:-10}
VUS=${BENCH_VUS:-8}
RAMPUP=${BENCH_RAMPUP:-30s}
DURATION=${BENCH_DURATION:-2m}
WORKERS=${BENCH_WORKERS:-4}
SOCKETS=${BENCH_SOCKETS:-raw plain}
bin=bin/oltplab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OLTPLAB_RESULTS=$tmp/results.db

pg_target="${OLTPLAB_TEST_POSTGRES%/postgres*}/bench?sslmode=disable"
my_target="${OLTPLAB_TEST_MYSQL%/}/bench"
psql "$OLTPLAB_TEST_POSTGRES" -qc "CREATE DATABASE bench" >/dev/null
python3 - "$OLTPLAB_TEST_MYSQL" <<'PY'
import sys, subprocess, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
subprocess.run(["mariadb", "--no-defaults", "-h", u.hostname, "-P", str(u.port), "-u", u.username,
                "-p" + u.password, "-e", "CREATE DATABASE bench"], check=True)
PY

for name in postgres mysql; do
	target=$pg_target
	[[ $name == mysql ]] && target=$my_target
	echo "bench: $name: build $W warehouses with $WORKERS workers" >&2
	$bin build --target "$target" --warehouses "$W" --workers "$WORKERS" --json >"$tmp/$name-build.json"
	for style in procedures client-sql; do
		flag=""
		[[ $style == client-sql ]] && flag=--client-sql
		for sockets in $SOCKETS; do
			rawconn=on
			[[ $sockets == plain ]] && rawconn=off
			echo "bench: $name: $VUS virtual users, $style, $sockets sockets, $RAMPUP ramp-up, $DURATION measured" >&2
			OLTPLAB_RAWCONN=$rawconn $bin run --target "$target" --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" $flag --json \
				>"$tmp/$name-run-$style-$sockets.json"
		done
	done
	echo "bench: $name: consistency check after the runs" >&2
	$bin check --target "$target" --json >"$tmp/$name-check.json" || true
done

echo "bench: postgres: tpc-c terminals ${BENCH_TERMINALS:-1000,10000}, ${BENCH_TERMINAL_WINDOW:-1m} measured each" >&2
uptime >"$tmp/uptime-before"
OLTPLAB_BENCH_TARGET=$pg_target OLTPLAB_BENCH_TERMINALS=${BENCH_TERMINALS:-1000,10000} \
	OLTPLAB_BENCH_WINDOW=${BENCH_TERMINAL_WINDOW:-1m} \
	go test -run '^$' -bench BenchmarkTerminals -benchtime 1x -timeout 0 ./internal/driver >"$tmp/terminals.txt"
uptime >"$tmp/uptime-after"

if [[ $(id -u) == 0 && -e /dev/fuse && ${BENCH_LATENCY:-1} != 0 ]]; then
	echo "bench: the latency layer's overhead at zero delay (scripts/latency-bench.sh)" >&2
	scripts/latency-bench.sh >"$tmp/latency.json"
fi

python3 - "$tmp" "$W" "$SOCKETS" <<'PY'
import json, os, re, sys
tmp, w, sockets = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
out = {"warehouses": w}
for name in ("postgres", "mysql"):
    b = json.load(open(os.path.join(tmp, f"{name}-build.json")))["result"]
    d = {"build": {"seconds": round(b["total_seconds"], 1), "load_seconds": round(b["load_seconds"], 1),
                   "index_seconds": round(b["index_seconds"], 1), "rows": b["total_rows"],
                   "rows_per_sec_loading": round(b["rows_per_sec"]), "workers": b["workers"]}}
    for style in ("procedures", "client-sql"):
        for sk in sockets:
            r = json.load(open(os.path.join(tmp, f"{name}-run-{style}-{sk}.json")))["result"]
            d[f"{style} ({sk} sockets)"] = {
                "vus": r["options"]["vus"], "nopm": round(r["nopm"]), "tpm": round(r["tpm"]),
                "tpm_source": r["tpm_source"],
                "driver_cpu_us_per_tx": round(r["driver_cpu_micros_per_tx"], 1),
                "driver_cpu_seconds": round(r["driver_cpu_seconds"], 2),
                "driver_go_processors": r.get("driver_procs"),
                "window_seconds": round(r["window"]["seconds"], 1),
                "audit_out_of_bounds": [f["Name"] for f in r["audit_figures"]
                                        if not f["OK"] and not f["Clause"].startswith("5.2.3")]}
    c = json.load(open(os.path.join(tmp, f"{name}-check.json")))["result"]
    d["check_after_runs_passed"] = c["passed"]
    out[name] = d
terminals = {}
for line in open(os.path.join(tmp, "terminals.txt")):
    m = re.match(r"BenchmarkTerminals/terminals=(\d+)\S*\s+\d+\s+\d+ ns/op\s+(.*)", line)
    if m:
        f = m.group(2).split()
        terminals[m.group(1)] = {unit: float(v) for v, unit in zip(f[0::2], f[1::2])}
load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
out["tpcc_terminals"] = {"database_warehouses": w, "load_average_before": load("uptime-before"),
                         "load_average_after": load("uptime-after"), "by_terminals": terminals}
if os.path.exists(os.path.join(tmp, "latency.json")):
    out["latency_layer"] = json.load(open(os.path.join(tmp, "latency.json")))
print(json.dumps(out, indent=2))
PY
