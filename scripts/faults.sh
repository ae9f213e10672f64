#!/usr/bin/env bash
# Server faults during `oltplab run`, on the private servers of
# scripts/testservers.sh, with the outcomes README's "What happens when
# something fails" reports:
#
#   scripts/testservers.sh run scripts/faults.sh
#
# For each engine it builds one warehouse, then runs a 20 s window and, 6 s
# into the run, crashes the server and starts it again (PostgreSQL:
# `pg_ctl restart -m immediate`, once right after a CHECKPOINT; MariaDB:
# kill -9 and a new mariadbd with the same options); then it stops the
# server for good during a run with --reconnect-for 10s and starts it
# again. It prints each run's exit code, wall time, headline, outages and
# fallback. It only touches the servers testservers.sh started for it.
set -uo pipefail

[[ -n ${OLTPLAB_TEST_POSTGRES:-} && -n ${OLTPLAB_TEST_MYSQL:-} ]] ||
	{ echo "run me through scripts/testservers.sh run $0" >&2; exit 2; }
pgbin=/usr/lib/postgresql/15/bin
pgdata=$(dirname "$OLTPLAB_TEST_POSTGRES_LOG")/data
mydir=$(dirname "$OLTPLAB_TEST_MYSQL_LOG")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/oltplab" ./cmd/oltplab || exit 1
export OLTPLAB_RESULTS=$work/results.db

as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u "$(stat -c %U "$pgdata")" -- "$@"; else "$@"; fi; }
pg_target() { echo "${OLTPLAB_TEST_POSTGRES%%/postgres\?*}/faults?sslmode=disable"; }
my_target() { echo "${OLTPLAB_TEST_MYSQL%/}/faults"; }

# measure NAME FAULT RUN-ARGS...: runs oltplab run in the background,
# calls FAULT 6 s later, and reports how the run ended.
measure() {
	local name=$1 fault=$2
	shift 2
	local start=$SECONDS
	"$work/oltplab" run "$@" --vus 4 --rampup 2s --grace 2s >"$work/out" 2>"$work/err" &
	local pid=$!
	sleep 6
	"$fault"
	wait "$pid"
	local code=$?
	echo "== $name: exit $code after $((SECONDS - start)) s"
	grep -E '^  (NOPM|TPM|outage|TPM and NOPM)|SUSPECT|FAILURES' "$work/out"
	grep -E '^oltplab:' "$work/err"
}

pg_crash() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w restart >/dev/null; }
pg_checkpoint_crash() { psql -q "$OLTPLAB_TEST_POSTGRES" -c CHECKPOINT && pg_crash; }
pg_gone() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w stop >/dev/null; }
pg_back() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$OLTPLAB_TEST_POSTGRES_LOG" -w start >/dev/null; }

my_args=()
my_kill() {
	local pid
	pid=$(cat "$mydir/pid")
	mapfile -d '' my_args <"/proc/$pid/cmdline"
	kill -9 "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}
my_back() {
	"${my_args[@]}" >/dev/null 2>&1 &
	until mariadb-admin --no-defaults --socket="$mydir/sock" -uroot ping >/dev/null 2>&1; do sleep 0.2; done
}
my_crash() { my_kill && my_back; }

psql -q "$OLTPLAB_TEST_POSTGRES" -c "CREATE DATABASE faults" || exit 1
"$work/oltplab" build --target "$(pg_target)" --warehouses 1 >/dev/null 2>&1 || exit 1
measure "PostgreSQL pg_ctl restart -m immediate" pg_crash --target "$(pg_target)" --duration 20s
measure "PostgreSQL CHECKPOINT, then pg_ctl restart -m immediate" pg_checkpoint_crash --target "$(pg_target)" --duration 20s
measure "PostgreSQL stopped for good (--reconnect-for 10s)" pg_gone --target "$(pg_target)" --duration 60s --reconnect-for 10s
pg_back

mariadb --no-defaults --socket="$mydir/sock" -uroot -e "CREATE DATABASE faults" || exit 1
"$work/oltplab" build --target "$(my_target)" --warehouses 1 >/dev/null 2>&1 || exit 1
measure "MariaDB kill -9, then started again" my_crash --target "$(my_target)" --duration 20s
measure "MariaDB killed for good (--reconnect-for 10s)" my_kill --target "$(my_target)" --duration 60s --reconnect-for 10s
my_back
