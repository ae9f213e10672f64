#!/usr/bin/env bash
# scripts/sidebyside.sh: oltplab and go-tpc side by side on one private
# server started by scripts/testservers.sh (its bench profile: fsync on):
# PostgreSQL 15 (DB=postgres, the default) or MariaDB (DB=mariadb). One
# tool runs at a time, each in its own database, measured the same way:
#
#   NOPM          New-Orders counted from the database over the window (the
#                 delta of SUM(d_next_o_id) of the tool's database) per minute
#   TPS           the server's committed + rolled-back transactions over the
#                 window per second: on PostgreSQL xact_commit + xact_rollback
#                 of the tool's database (pg_stat_database); on MariaDB the
#                 server's Com_commit + Com_rollback (global status: only the
#                 measured tool runs on that server)
#   client us/tx  the tool process's CPU (utime + stime from /proc/PID/stat)
#                 over the window, divided by those server transactions
#
# On MariaDB, Com_commit and Com_rollback count COMMIT and ROLLBACK
# statements. Every tool's transactions are counted the same way: oltplab's
# procedures end each transaction with COMMIT or ROLLBACK inside the
# procedure (counted too), oltplab --client-sql sends COMMIT or ROLLBACK
# (autocommit off), and go-tpc (v1.0.7) wraps each transaction in
# database/sql's BeginTx and Commit, whose MySQL driver sends START
# TRANSACTION and COMMIT; its New-Order on an unused item (the 1% rollback)
# returns early and its deferred Rollback sends ROLLBACK.
#
# Each tool runs RAMPUP, then the window of WINDOW is measured; then it is
# stopped. Tools, in order, for each number of virtual users in VUS:
# oltplab with stored procedures, oltplab --client-sql, and go-tpc's tpcc
# (client-side SQL) with as many threads, when GO_TPC names a go-tpc
# binary that speaks the server's protocol. The go-tpc the Go module proxy
# serves (v1.0.7) speaks only MySQL's: compare with it on DB=mariadb.
#
# Environment: DB (postgres or mariadb), W (10 warehouses, in each tool's
# own database), VUS ("4 8"), RAMPUP (1m), WINDOW (2m), GO_TPC (go-tpc
# binary; its rows are skipped, saying so, when it is not executable or has
# no driver for DB), OLTPLAB (an oltplab binary to measure instead of the
# one make builds, e.g. an earlier build, to compare two). For a quick try:
#
#   DB=mariadb W=2 RAMPUP=5s WINDOW=15s GO_TPC=/tmp/gotpc/bin/go-tpc scripts/sidebyside.sh
#
# Prints the table on stdout, progress on stderr. Compare CPU per
# transaction on a quiet machine: other load inflates every tool's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${DB:-postgres}
case $DB in
postgres) server=postgres ;;
mariadb) server=mysql ;;
*)
	echo "sidebyside: DB=$DB: want postgres or mariadb" >&2
	exit 2
	;;
esac
if [[ ${1:-} != inner ]]; then
	[[ -n ${OLTPLAB:-} ]] || make -s build >&2
	exec env OLTPLAB_SERVER_PROFILE=bench OLTPLAB_SERVERS=$server OLTPLAB_NEEDS_BROWSER=0 \
		scripts/testservers.sh run "$0" inner
fi

W=${W:-10}
VUS=${VUS:-4 8}
RAMPUP=${RAMPUP:-1m}
WINDOW=${WINDOW:-2m}
GO_TPC=${GO_TPC:-}
bin=${OLTPLAB:-$PWD/bin/oltplab}
[[ -x $bin ]] || { echo "sidebyside: OLTPLAB=$bin is not an executable" >&2; exit 2; }
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

# urlpart PART prints one part (username, password, port) of the admin URL.
urlpart() {
	python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(str(getattr(urllib.parse.urlparse(sys.argv[1]), sys.argv[2]))))' "$admin" "$1"
}
if [[ $DB == postgres ]]; then
	admin=$OLTPLAB_TEST_POSTGRES # postgres://USER:PW@HOST:PORT/postgres?sslmode=disable
	base=${admin%/postgres*}
	url() { echo "$base/$1?sslmode=disable"; }
	sql() { psql "$(url "$1")" -XAtqc "$2"; }
	# xacts DB prints the server's transactions of database DB so far.
	xacts() { sql "$1" "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'"; }
	admin_db=postgres
	gotpc_driver=postgres
	version="PostgreSQL $(sql postgres 'SHOW server_version')"
else
	admin=$OLTPLAB_TEST_MYSQL # mysql://USER:PW@HOST:PORT/
	base=${admin%/}
	url() { echo "$base/$1"; }
	# The password travels in the client's environment, not its arguments.
	MYSQL_PWD=$(urlpart password)
	export MYSQL_PWD
	sql() { mariadb --no-defaults -h 127.0.0.1 -P "$(urlpart port)" -u "$(urlpart username)" -NBe "$2" "$1"; }
	xacts() {
		sql "$1" "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS
			WHERE VARIABLE_NAME IN ('COM_COMMIT', 'COM_ROLLBACK')"
	}
	admin_db=mysql
	gotpc_driver=mysql
	version="MariaDB $(sql mysql 'SELECT VERSION()')"
fi
db_user=$(urlpart username)
db_port=$(urlpart port)

# snapshot prints "cpu_ticks xacts new_orders" for the tool process $1 and database $2.
snapshot() {
	local ticks
	ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat")
	echo "$ticks $(xacts "$2") $(sql "$2" "SELECT SUM(d_next_o_id) FROM district")"
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
sql "$admin_db" "CREATE DATABASE oltplab" >/dev/null
$bin build --target "$(url oltplab)" --warehouses "$W" --workers 2 >/dev/null 2>"$tmp/build.log" ||
	{ cat "$tmp/build.log" >&2; exit 1; }
have_gotpc=0 gotpc_skip="GO_TPC not set or not executable"
if [[ -n $GO_TPC && -x $GO_TPC ]] && ! "$GO_TPC" tpcc --help 2>&1 | grep -q "^ *-d, --driver .*$gotpc_driver"; then
	# Older go-tpc builds speak only MySQL's protocol (their --driver
	# help says "mysql"): against PostgreSQL they would hang.
	gotpc_skip="$GO_TPC has no $gotpc_driver driver (see its --driver help): use a go-tpc with one, or DB=mariadb"
elif [[ -n $GO_TPC && -x $GO_TPC ]]; then
	have_gotpc=1
	log "building $W warehouses for go-tpc"
	sql "$admin_db" "CREATE DATABASE gotpc" >/dev/null
	gotpc=("$GO_TPC" tpcc --driver "$gotpc_driver" -H 127.0.0.1 -P "$db_port" -U "$db_user" -p "$(urlpart password)"
		-D gotpc --warehouses "$W")
	# --no-check: go-tpc's consistency check after loading runs for many
	# minutes on MariaDB (one of its queries alone took over 6 minutes for 2
	# warehouses); it is not part of what is measured here.
	"${gotpc[@]}" prepare --no-check >"$tmp/gotpc-prepare.log" 2>&1 || { log "go-tpc prepare failed"; tail -5 "$tmp/gotpc-prepare.log" >&2; exit 1; }
fi
((have_gotpc)) || log "go-tpc rows skipped: $gotpc_skip"

# The tools end on their own a little after the window; stop_tool ends
# them at once (oltplab records a cut-short run, not measured here).
run_s=$(python3 -c "print(int($ramp_s + $window_s + 30))")
echo "W=$W RAMPUP=$RAMPUP WINDOW=$WINDOW, $("$bin" version | head -1), $version, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
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
