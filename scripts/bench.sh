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
# The analytic workload (tpch): dbgen-equivalent generation per core
# (BenchmarkGenerate/all: MB/s of flat-file text, no database), the TPC-H
# build of BENCH_TPCH_SF (1) on PostgreSQL against loading the same rows
# with COPY from files (BenchmarkTPCHBuild: the limit), and `oltplab tpch
# build` at that scale on each of BENCH_TPCH_DIALECTS ("postgres mysql").
# BENCH_TPCC=0 skips the TPC-C part, BENCH_TPCH=0 the TPC-H one.
# An agent's overhead per streamed host sample (BenchmarkStreamSample in
# internal/agent: the agent's CPU and the client's per batch and per value,
# and the bytes on the wire, TLS on loopback; BENCH_AGENT_BATCHES batches,
# 100 by default, at the agent's shortest interval) as agent_stream;
# BENCH_AGENT=0 skips it.
# The TPC-C build's phases at BENCH_BUILD_WAREHOUSES (100) on PostgreSQL
# (BenchmarkTPCCBuild, BENCH_WORKERS): generation alone, the server's own
# COPY from files (the limit), its index builds and the keys' attach (the
# constraint check), against oltplab build's load and indexes: rows/s per
# phase, each phase's share of the limit and the ratios
# (postgres_build_vs_copy_from_files); the same on MariaDB against the
# server's LOAD DATA INFILE from files (mysql_build_vs_load_data_from_files;
# BENCH_BUILD_MYSQL_WAREHOUSES, default the same: two MariaDB builds of 100
# warehouses take several minutes each);
# then `oltplab build` at that size on each of BENCH_BUILD_DIALECTS
# ("sqlite"): its phases and rows/s (tpcc_build_phases; no limit).
# Each TPC-C run also gives the database server's CPU per database
# transaction (its processes' CPU time over the window, from /proc:
# server_cpu_us_per_tx, per dialect and style), the foreign CPU and the
# load average after it: a run whose foreign CPU passed
# BENCH_MAX_FOREIGN_CPU (10 %) is kept with status contaminated (a
# shared host); compare such figures side by side, not with a quiet
# host's.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} != inner ]]; then
	exec env OLTPLAB_SERVER_PROFILE=bench OLTPLAB_NEEDS_BROWSER=0 scripts/testservers.sh run "$0" inner
fi

W=${BENCH_WAREHOUSES:-10}
BW=${BENCH_BUILD_WAREHOUSES:-100}
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

tpcc_names="postgres mysql"
[[ ${BENCH_TPCC:-1} == 0 ]] && tpcc_names=""
for name in $tpcc_names; do
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
			# Exit 25: stored, but foreign CPU above the limit (a shared
			# host); kept, and its status says so.
			rc=0
			OLTPLAB_RAWCONN=$rawconn $bin run --target "$target" --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" $flag --json \
				--max-foreign-cpu "${BENCH_MAX_FOREIGN_CPU:-10}" >"$tmp/$name-run-$style-$sockets.json" || rc=$?
			[[ $rc == 0 || $rc == 25 ]] || exit "$rc"
			uptime >"$tmp/$name-run-$style-$sockets.uptime"
		done
	done
	echo "bench: $name: consistency check after the runs" >&2
	$bin check --target "$target" --json >"$tmp/$name-check.json" || true
done

if [[ ${BENCH_TPCC:-1} != 0 ]]; then
	echo "bench: postgres: build phases of $BW warehouses against COPY from files (BenchmarkTPCCBuild)" >&2
	uptime >"$tmp/tpccbuild-uptime-before"
	OLTPLAB_BENCH_TPCC_WAREHOUSES=$BW OLTPLAB_BENCH_TPCC_WORKERS=$WORKERS \
		go test -run '^$' -bench TPCCBuild -benchtime 1x -timeout 0 ./internal/dialect/postgres >"$tmp/tpcc-pgbuild.txt"
	uptime >"$tmp/tpccbuild-uptime-after"
	MBW=${BENCH_BUILD_MYSQL_WAREHOUSES:-$BW}
	echo "bench: mysql: build phases of $MBW warehouses against LOAD DATA INFILE from files (BenchmarkTPCCBuild)" >&2
	uptime >"$tmp/mybuild-uptime-before"
	OLTPLAB_BENCH_TPCC_WAREHOUSES=$MBW OLTPLAB_BENCH_TPCC_WORKERS=$WORKERS \
		go test -run '^$' -bench TPCCBuild -benchtime 1x -timeout 0 ./internal/dialect/mysql >"$tmp/tpcc-mybuild.txt"
	uptime >"$tmp/mybuild-uptime-after"
	for name in ${BENCH_BUILD_DIALECTS:-sqlite}; do
		case $name in
		mysql)
			target="${OLTPLAB_TEST_MYSQL%/}/bench_build"
			python3 - "$OLTPLAB_TEST_MYSQL" <<'PY'
import sys, subprocess, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
subprocess.run(["mariadb", "--no-defaults", "-h", u.hostname, "-P", str(u.port), "-u", u.username,
                "-p" + u.password, "-e", "CREATE DATABASE bench_build"], check=True)
PY
			;;
		sqlite) target="sqlite:$tmp/build.db" ;;
		*) echo "bench: BENCH_BUILD_DIALECTS: unknown dialect $name" >&2; exit 2 ;;
		esac
		echo "bench: $name: oltplab build --warehouses $BW --workers $WORKERS" >&2
		uptime >"$tmp/build-$name.uptime"
		$bin build --target "$target" --warehouses "$BW" --workers "$WORKERS" --json >"$tmp/build-$name.json"
		uptime >>"$tmp/build-$name.uptime"
		rm -f "$tmp/build.db" "$tmp/build.db-wal" "$tmp/build.db-shm"
	done
	echo "bench: postgres: tpc-c terminals ${BENCH_TERMINALS:-1000,10000}, ${BENCH_TERMINAL_WINDOW:-1m} measured each" >&2
	uptime >"$tmp/uptime-before"
	OLTPLAB_BENCH_TARGET=$pg_target OLTPLAB_BENCH_TERMINALS=${BENCH_TERMINALS:-1000,10000} \
		OLTPLAB_BENCH_WINDOW=${BENCH_TERMINAL_WINDOW:-1m} \
		go test -run '^$' -bench BenchmarkTerminals -benchtime 1x -timeout 0 ./internal/driver >"$tmp/terminals.txt"
	uptime >"$tmp/uptime-after"
fi

H=${BENCH_TPCH_SF:-1}
if [[ ${BENCH_TPCH:-1} != 0 ]]; then
	echo "bench: tpch: generation rate per core (BenchmarkGenerate/all, no database)" >&2
	go test -run '^$' -bench 'Generate/all$' -benchtime 3x ./internal/tpch >"$tmp/tpch-generate.txt"
	echo "bench: tpch: SF $H build on postgres against COPY from files (BenchmarkTPCHBuild)" >&2
	OLTPLAB_BENCH_TPCH_SF=$H OLTPLAB_BENCH_TPCH_WORKERS=${BENCH_WORKERS:-4} \
		go test -run '^$' -bench TPCHBuild -benchtime 1x -timeout 0 ./internal/dialect/postgres >"$tmp/tpch-pgbuild.txt"
	psql "$OLTPLAB_TEST_POSTGRES" -qc "CREATE DATABASE bench_tpch" >/dev/null
	python3 - "$OLTPLAB_TEST_MYSQL" <<'PY'
import sys, subprocess, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
subprocess.run(["mariadb", "--no-defaults", "-h", u.hostname, "-P", str(u.port), "-u", u.username,
                "-p" + u.password, "-e", "CREATE DATABASE bench_tpch"], check=True)
PY
	for name in ${BENCH_TPCH_DIALECTS:-postgres mysql}; do
		case $name in
		postgres) target="${OLTPLAB_TEST_POSTGRES%/postgres*}/bench_tpch?sslmode=disable" ;;
		mysql) target="${OLTPLAB_TEST_MYSQL%/}/bench_tpch" ;;
		sqlite) target="sqlite:$tmp/tpch.db" ;;
		*) echo "bench: BENCH_TPCH_DIALECTS: unknown dialect $name" >&2; exit 2 ;;
		esac
		echo "bench: tpch: $name: oltplab tpch build --scale $H --workers ${BENCH_WORKERS:-4}" >&2
		$bin tpch build --target "$target" --scale "$H" --workers "${BENCH_WORKERS:-4}" --json >"$tmp/tpch-build-$name.json"
	done
fi

if [[ ${BENCH_AGENT:-1} != 0 ]]; then
	echo "bench: an agent's overhead per streamed host sample (BenchmarkStreamSample, ${BENCH_AGENT_BATCHES:-100} batches at 100 ms)" >&2
	uptime >"$tmp/agent-uptime-before"
	go test -run '^$' -bench 'StreamSample$' -benchtime "${BENCH_AGENT_BATCHES:-100}x" ./internal/agent >"$tmp/agent.txt"
	uptime >"$tmp/agent-uptime-after"
fi

if [[ $(id -u) == 0 && -e /dev/fuse && ${BENCH_LATENCY:-1} != 0 ]]; then
	echo "bench: the latency layer's overhead at zero delay (scripts/latency-bench.sh)" >&2
	scripts/latency-bench.sh >"$tmp/latency.json"
fi

python3 - "$tmp" "$W" "$SOCKETS" "$tpcc_names" "$H" "$BW" <<'PY'
import glob, json, os, re, sys
tmp, w, sockets, tpcc_names, sf, bw = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5], int(sys.argv[6])
out = {"warehouses": w} if tpcc_names else {}
for name in tpcc_names:
    b = json.load(open(os.path.join(tmp, f"{name}-build.json")))["result"]
    d = {"build": {"seconds": round(b["total_seconds"], 1), "load_seconds": round(b["load_seconds"], 1),
                   "index_seconds": round(b["index_seconds"], 1), "rows": b["total_rows"],
                   "rows_per_sec_loading": round(b["rows_per_sec"]), "workers": b["workers"]}}
    server_us = {}
    for style in ("procedures", "client-sql"):
        for sk in sockets:
            doc = json.load(open(os.path.join(tmp, f"{name}-run-{style}-{sk}.json")))
            r, cpu = doc["result"], (doc.get("monitor") or {}).get("cpu_use") or {}
            us = cpu.get("server_cpu_micros_per_tx")
            server_us.setdefault(style, {})[f"{sk} sockets"] = None if us is None else round(us, 1)
            d[f"{style} ({sk} sockets)"] = {"status": doc.get("status"),
                "server_cpu_us_per_tx": None if us is None else round(us, 1),
                "server_cpu_source": cpu.get("server_source"),
                "foreign_cpu_pct": None if cpu.get("foreign_pct") is None else round(cpu["foreign_pct"], 1),
                "load_average_after": open(os.path.join(tmp, f"{name}-run-{style}-{sk}.uptime")).read().split("load average:")[-1].strip(),
                "vus": r["options"]["vus"], "nopm": round(r["nopm"]), "tpm": round(r["tpm"]),
                "tpm_source": r["tpm_source"],
                "driver_cpu_us_per_tx": round(r["driver_cpu_micros_per_tx"], 1),
                "driver_cpu_seconds": round(r["driver_cpu_seconds"], 2),
                "driver_go_processors": r.get("driver_procs"),
                "window_seconds": round(r["window"]["seconds"], 1),
                "audit_out_of_bounds": [f["Name"] for f in r["audit_figures"]
                                        if not f["OK"] and not f["Clause"].startswith("5.2.3")]}
    d["server_cpu_us_per_tx"] = server_us
    c = json.load(open(os.path.join(tmp, f"{name}-check.json")))["result"]
    d["check_after_runs_passed"] = c["passed"]
    out[name] = d
def bench_metrics(path, name):
    """The metrics of a Go benchmark line: {unit: value}."""
    for line in open(path):
        m = re.match(r"Benchmark" + name + r"\S*\s+\d+\s+\d+ ns/op\s+(.*)", line)
        if m:
            f = m.group(1).split()
            return {unit: float(v) for v, unit in zip(f[0::2], f[1::2])}
    return {}
if os.path.exists(os.path.join(tmp, "tpcc-pgbuild.txt")):
    p = bench_metrics(os.path.join(tmp, "tpcc-pgbuild.txt"), "TPCCBuild")
    load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
    r = lambda k: None if p.get(k) is None else round(p[k], 2)
    rows = p.get("rows") or 0
    per_s = lambda k: None if not p.get(k) else round(rows / p[k])
    limit_s = sum(p.get(k) or 0 for k in ("copy-s", "files-index-s", "files-attach-s"))
    ours_s = (p.get("load-s") or 0) + (p.get("index-s") or 0)
    share = lambda v: None if not limit_s or v is None else round(v / limit_s, 3)
    out["postgres_build_vs_copy_from_files"] = {
        "warehouses": bw, "workers": int(os.environ.get("BENCH_WORKERS", "4")), "rows": int(rows),
        "generate": {"seconds": r("generate-s"), "rows_per_sec": r("generate-rows/s"),
                     "note": "rows generated and encoded as COPY text by the workers, nothing sent"},
        "copy_from_files": {"seconds": r("copy-s"), "rows_per_sec": r("copy-rows/s"), "index_seconds": r("files-index-s"),
                            "index_rows_per_sec": per_s("files-index-s"), "constraint_check_seconds": r("files-attach-s"),
                            "total_seconds": round(limit_s, 2),
                            "note": "the limit: the server's own COPY FROM 'file' (one connection per table, each in the transaction that truncates it, WITH FREEZE), then the same index builds and the primary keys' attach (the only constraint check, no scan)"},
        "oltplab": {"load_seconds": r("load-s"), "rows_per_sec": r("load-rows/s"), "index_seconds": r("index-s"),
                    "index_rows_per_sec": per_s("index-s"), "total_seconds": r("total-s"),
                    "note": "generation streamed through one COPY FROM STDIN ... WITH (FREEZE) per table; indexes, then the keys attached without a scan (inside index_seconds; no foreign keys)"},
        "share_of_limit": {"generate": share(p.get("generate-s")), "copy": share(p.get("copy-s")),
                           "index": share(p.get("files-index-s")), "constraint_check": share(p.get("files-attach-s")),
                           "oltplab_load": share(p.get("load-s")), "oltplab_index": share(p.get("index-s")),
                           "note": "each phase's seconds over the limit's total (copy + index + constraint check); generation overlaps the load in oltplab's build"},
        "load_x": r("load-x"), "build_x": r("build-x"), "goal": "build_x (load and indexes) within 1.2x of the limit",
        "load_average_before": load("tpccbuild-uptime-before"), "load_average_after": load("tpccbuild-uptime-after")}
if os.path.exists(os.path.join(tmp, "tpcc-mybuild.txt")):
    p = bench_metrics(os.path.join(tmp, "tpcc-mybuild.txt"), "TPCCBuild")
    rows = p.get("rows") or 0
    per_s = lambda k: None if not p.get(k) else round(rows / p[k])
    r = lambda k: None if p.get(k) is None else round(p[k], 2)
    limit_s = (p.get("copy-s") or 0) + (p.get("files-index-s") or 0)
    share = lambda k: None if not limit_s or p.get(k) is None else round(p[k] / limit_s, 3)
    load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
    out["mysql_build_vs_load_data_from_files"] = {
        "warehouses": int(os.environ.get("BENCH_BUILD_MYSQL_WAREHOUSES") or bw), "workers": int(os.environ.get("BENCH_WORKERS", "4")), "rows": int(rows),
        "load_data_from_files": {"seconds": r("copy-s"), "rows_per_sec": r("copy-rows/s"), "index_seconds": r("files-index-s"),
                                 "index_rows_per_sec": per_s("files-index-s"), "total_seconds": round(limit_s, 2),
                                 "note": "the limit: the server's own LOAD DATA INFILE of the files on as many connections (no unique or foreign key checks, no binary log), then the same CreateIndexes (the keys' checks are inside it)"},
        "oltplab": {"load_seconds": r("load-s"), "rows_per_sec": r("load-rows/s"), "index_seconds": r("index-s"),
                    "index_rows_per_sec": per_s("index-s"), "total_seconds": r("total-s"),
                    "note": "generation streamed through LOAD DATA LOCAL INFILE, then CreateIndexes"},
        "share_of_limit": {"load_data": share("copy-s"), "index": share("files-index-s"),
                           "oltplab_load": share("load-s"), "oltplab_index": share("index-s")},
        "load_x": r("load-x"), "build_x": r("build-x"), "goal": "build_x within 1.2x of the limit",
        "load_average_before": load("mybuild-uptime-before"), "load_average_after": load("mybuild-uptime-after")}
for path in sorted(glob.glob(os.path.join(tmp, "build-*.json"))):
    b = json.load(open(path))["result"]
    ld = lambda s: None if not s else round(b["total_rows"] / s)
    t = b["total_seconds"] or 1
    up = open(path[:-len(".json")] + ".uptime").read().split("\n")
    out.setdefault("tpcc_build_phases", {})[b["dialect"]] = {
        "warehouses": b["warehouses"], "workers": b["workers"], "rows": b["total_rows"], "seconds": round(b["total_seconds"], 1),
        "load": {"seconds": round(b["load_seconds"], 1), "rows_per_sec": ld(b["load_seconds"]), "share": round(b["load_seconds"] / t, 3)},
        "index": {"seconds": round(b["index_seconds"], 1), "rows_per_sec": ld(b["index_seconds"]), "share": round(b["index_seconds"] / t, 3)},
        "analyze_seconds": round(b["analyze_seconds"], 1), "procedures_seconds": round(b.get("procedures_seconds", 0), 1),
        "load_average_before": up[0].split("load average:")[-1].strip(),
        "load_average_after": up[1].split("load average:")[-1].strip() if len(up) > 1 else None,
        "note": "oltplab build alone: no limit measured for this dialect"}
if os.path.exists(os.path.join(tmp, "terminals.txt")):
    terminals = {}
    for line in open(os.path.join(tmp, "terminals.txt")):
        m = re.match(r"BenchmarkTerminals/terminals=(\d+)\S*\s+\d+\s+\d+ ns/op\s+(.*)", line)
        if m:
            f = m.group(2).split()
            terminals[m.group(1)] = {unit: float(v) for v, unit in zip(f[0::2], f[1::2])}
    load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
    out["tpcc_terminals"] = {"database_warehouses": w, "load_average_before": load("uptime-before"),
                             "load_average_after": load("uptime-after"), "by_terminals": terminals}
if os.path.exists(os.path.join(tmp, "tpch-generate.txt")):
    g = bench_metrics(os.path.join(tmp, "tpch-generate.txt"), "Generate/all")
    p = bench_metrics(os.path.join(tmp, "tpch-pgbuild.txt"), "TPCHBuild")
    h = {"scale": sf,
         "generate_per_core": {"mb_per_s": g.get("MB/s"), "mb_per_cpu_s": g.get("MB/cpu-s"),
                               "note": "dbgen flat-file text of the SF 0.1 population mix, no database"},
         "postgres_vs_copy_from_files": {"files_load_s": p.get("files-load-s"), "oltplab_load_s": p.get("oltplab-load-s"),
                                         "load_x": p.get("load-x"), "files_total_s": p.get("files-total-s"),
                                         "oltplab_total_s": p.get("oltplab-total-s"), "total_x": p.get("total-x"),
                                         "goal": "oltplab within 1.3x of COPY from files"},
         "builds": {}}
    for path in sorted(glob.glob(os.path.join(tmp, "tpch-build-*.json"))):
        b = json.load(open(path))["result"]
        h["builds"][b["dialect"]] = {"seconds": round(b["total_seconds"], 1), "text_pool_seconds": round(b["text_seconds"], 1), "load_seconds": round(b["load_seconds"], 1),
                                     "index_seconds": round(b["index_seconds"], 1), "analyze_seconds": round(b["analyze_seconds"], 1),
                                     "rows": b["total_rows"], "workers": b["workers"]}
    out["tpch"] = h
if os.path.exists(os.path.join(tmp, "agent.txt")):
    a = bench_metrics(os.path.join(tmp, "agent.txt"), "StreamSample")
    load = lambda f: open(os.path.join(tmp, f)).read().split("load average:")[-1].strip()
    out["agent_stream"] = {
        "values_per_batch": a.get("values/batch"),
        "per_batch": {"agent_cpu_us": a.get("agent-cpu-us/batch"), "client_cpu_us": a.get("client-cpu-us/batch"),
                      "wire_bytes": a.get("wire-bytes/batch")},
        "per_value": {"agent_cpu_ns": a.get("agent-cpu-ns/value"), "client_cpu_ns": a.get("client-cpu-ns/value"),
                      "wire_bytes": a.get("wire-bytes/value")},
        "note": "one batch is one interval's host sample (CPU, memory, disks, network) streamed over TLS on loopback at 100 ms; agent in a process of its own, client in the benchmark's; CPU in 10 ms ticks",
        "load_average_before": load("agent-uptime-before"), "load_average_after": load("agent-uptime-after")}
if os.path.exists(os.path.join(tmp, "latency.json")):
    out["latency_layer"] = json.load(open(os.path.join(tmp, "latency.json")))
print(json.dumps(out, indent=2))
PY
