#!/usr/bin/env bash
# scripts/sidebyside.sh: oltplab and go-tpc side by side on one private
# PostgreSQL 15 server (scripts/testservers.sh's bench profile: fsync on),
# one tool at a time, measured the same way for every tool:
#
#   NOPM          New-Orders counted from the database over the window (the
#                 delta of SUM(d_next_o_id) of the tool's database) per minute
#   TPS           the server's committed + rolled-back transactions of that
#                 database over the window (pg_stat_database) per second
#   client us/tx  the tool process's CPU (utime + stime from /proc/PID/stat)
#                 over the window, divided by those server transactions
#
# Each tool runs RAMPUP, then the window of WINDOW is measured; then it is
# stopped. Tools, in order, for each number of virtual users in VUS:
# oltplab with stored procedures, oltplab --client-sql, and go-tpc's tpcc
# (client-side SQL) with as many threads, when GO_TPC names a go-tpc
# binary that has a PostgreSQL driver (older builds speak only MySQL).
#
# Environment: W (10 warehouses, in each tool's own database), VUS ("4 8"),
# RAMPUP (1m), WINDOW (2m), GO_TPC (go-tpc binary; its rows are skipped,
# saying so, when it is not executable). For a quick try:
#
#   W=2 RAMPUP=5s WINDOW=15s GO_TPC=/tmp/gotpc/bin/go-tpc scripts/sidebyside.sh
#
# Prints the table on stdout, progress on stderr. Compare CPU per
# transaction on a quiet machine: other load inflates every tool's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} != inner ]]; then
	make -s build >&2
	exec env OLTPLAB_SERVER_PROFILE=bench OLTPLAB_SERVERS=postgres OLTPLAB_NEEDS_BROWSER=0 \
		scripts/testservers.sh run "$0" inner
fi

W=${W:-10}
VUS=${VUS:-4 8}
RAMPUP=${RAMPUP:-1m}
WINDOW=${WINDOW:-2m}
GO_TPC=${GO_TPC:-}
bin=$PWD/bin/oltplab
tmp=$(mktemp -d)
tool_pid=""
cleanup() {
	if [[ -n $tool_pid ]] && kill -0 "$tool_pid" 2>/dev/null; then
		kill "$tool_pid" 2>/dev/null || true
		wait "$tool_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
export OLTPLAB_RESULTS=$tmp/results.db
log() { echo "sidebyside: $*" >&2; }

# seconds turns a Go-style duration (90s, 2m, 1m30s, 1h) into seconds.
seconds() {
	python3 - "$1" <<'PY'
import re, sys
s, total = sys.argv[1], 0.0
parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|m|s)", s)
if not parts or "".join(a + b for a, b in parts) != s:
    sys.exit(f"sidebyside: bad duration {s!r} (want e.g. 90s, 2m, 1m30s)")
for n, u in parts:
    total += float(n) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[u]
print(int(total) if total == int(total) else total)
PY
}
ramp_s=$(seconds "$RAMPUP")
window_s=$(seconds "$WINDOW")

admin=$OLTPLAB_TEST_POSTGRES # postgres://USER:PW@HOST:PORT/postgres?sslmode=disable
base=${admin%/postgres*}
url() { echo "$base/$1?sslmode=disable"; }
sql() { psql "$(url "$1")" -XAtqc "$2"; }
pg_user=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).username)' "$admin")
pg_port=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).port)' "$admin")

# snapshot prints "cpu_ticks xacts new_orders" for the tool process $1 and database $2.
snapshot() {
	local ticks
	ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat")
	echo "$ticks $(sql "$2" "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$2'") \
$(sql "$2" "SELECT SUM(d_next_o_id) FROM district")"
}

# measure DB NAME VUS: the tool started in the background as $tool_pid runs
# RAMPUP, then the window is measured; prints one table row.
measure() {
	local db=$1 name=$2 vus=$3 a b hz
	hz=$(getconf CLK_TCK)
	sleep "$ramp_s"
	kill -0 "$tool_pid" 2>/dev/null || { log "$name ended before the window (see $tmp/$name-$vus.log)"; tail -5 "$tmp/$name-$vus.log" >&2; exit 1; }
	a=$(snapshot "$tool_pid" "$db")
	sleep "$window_s"
	kill -0 "$tool_pid" 2>/dev/null || { log "$name ended inside the window"; tail -5 "$tmp/$name-$vus.log" >&2; exit 1; }
	b=$(snapshot "$tool_pid" "$db")
	python3 - "$vus" "$name" "$window_s" "$hz" $a $b <<'PY'
import sys
vus, name, win, hz = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
t0, x0, n0, t1, x1, n1 = map(float, sys.argv[5:11])
tx = x1 - x0
us = (t1 - t0) / hz * 1e6 / tx if tx > 0 else float("nan")
print(f"{vus:>4}  {name:<20} {(n1 - n0) * 60 / win:>10.0f} {tx / win:>9.0f} {us:>13.1f}", flush=True)
PY
}

stop_tool() {
	kill "$tool_pid" 2>/dev/null || true
	wait "$tool_pid" 2>/dev/null || true
	tool_pid=""
}

log "building $W warehouses for oltplab"
sql postgres "CREATE DATABASE oltplab" >/dev/null
$bin build --target "$(url oltplab)" --warehouses "$W" --workers 2 >/dev/null 2>"$tmp/build.log" ||
	{ cat "$tmp/build.log" >&2; exit 1; }
have_gotpc=0 gotpc_skip="GO_TPC not set or not executable"
if [[ -n $GO_TPC && -x $GO_TPC ]] && ! "$GO_TPC" tpcc --help 2>&1 | grep -q '^ *-d, --driver .*postgres'; then
	# Older go-tpc builds speak only MySQL's protocol (their --driver
	# help says "mysql"): against PostgreSQL they would hang.
	gotpc_skip="$GO_TPC has no PostgreSQL driver (see its --driver help): use a go-tpc with one"
elif [[ -n $GO_TPC && -x $GO_TPC ]]; then
	have_gotpc=1
	log "building $W warehouses for go-tpc"
	sql postgres "CREATE DATABASE gotpc" >/dev/null
	pw=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(urllib.parse.urlparse(sys.argv[1]).password))' "$admin")
	gotpc=("$GO_TPC" tpcc --driver postgres -H 127.0.0.1 -P "$pg_port" -U "$pg_user" -p "$pw" -D gotpc --warehouses "$W")
	"${gotpc[@]}" prepare >"$tmp/gotpc-prepare.log" 2>&1 || { log "go-tpc prepare failed"; tail -5 "$tmp/gotpc-prepare.log" >&2; exit 1; }
fi
((have_gotpc)) || log "go-tpc rows skipped: $gotpc_skip"

# The tools end on their own a little after the window; stop_tool ends
# them at once (oltplab records a cut-short run, not measured here).
run_s=$(python3 -c "print(int($ramp_s + $window_s + 30))")
echo "W=$W RAMPUP=$RAMPUP WINDOW=$WINDOW, PostgreSQL $(sql postgres 'SHOW server_version'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%4s  %-20s %10s %9s %13s\n' VUs tool NOPM TPS "client us/tx"
for vus in $VUS; do
	for style in procedures client-sql; do
		flag=()
		[[ $style == client-sql ]] && flag=(--client-sql)
		log "oltplab $style, $vus virtual users"
		$bin run --target "$(url oltplab)" --vus "$vus" --rampup 0s --duration "${run_s}s" "${flag[@]}" \
			>"$tmp/oltplab-$style-$vus.log" 2>&1 &
		tool_pid=$!
		measure oltplab "oltplab-$style" "$vus"
		stop_tool
	done
	if ((have_gotpc)); then
		log "go-tpc tpcc, $vus threads"
		"${gotpc[@]}" run --threads "$vus" --time "${run_s}s" >"$tmp/go-tpc-$vus.log" 2>&1 &
		tool_pid=$!
		measure gotpc go-tpc "$vus"
		stop_tool
	else
		printf '%4s  %-20s %s\n' "$vus" go-tpc "skipped: $gotpc_skip"
	fi
done
