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
# again; it freezes the server (SIGSTOP to it and every process it
# forked) for 10 s, then resumes it (SIGCONT); and it puts a loopback proxy
# between oltplab and the server that stops forwarding without closing
# anything for 10 s (run with --answer-timeout 5s), then for good
# (--reconnect-for 10s). It prints each run's exit code, wall time,
# headline, outages, stalls and fallback. It only touches the servers
# testservers.sh started for it, and resumes a frozen one whatever happens.
set -uo pipefail

[[ -n ${OLTPLAB_TEST_POSTGRES:-} && -n ${OLTPLAB_TEST_MYSQL:-} ]] ||
	{ echo "run me through scripts/testservers.sh run $0" >&2; exit 2; }
pgbin=/usr/lib/postgresql/15/bin
pgdata=$(dirname "$OLTPLAB_TEST_POSTGRES_LOG")/data
mydir=$(dirname "$OLTPLAB_TEST_MYSQL_LOG")
work=$(mktemp -d)
frozen=()
proxy=
cleanup() {
	((${#frozen[@]})) && kill -CONT "${frozen[@]}" 2>/dev/null
	[[ -n $proxy ]] && kill "$proxy" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/oltplab" ./cmd/oltplab || exit 1
export OLTPLAB_RESULTS=$work/results.db

as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u "$(stat -c %U "$pgdata")" -- "$@"; else "$@"; fi; }
pg_target() { echo "${OLTPLAB_TEST_POSTGRES%%/postgres\?*}/faults?sslmode=disable"; }
my_target() { echo "${OLTPLAB_TEST_MYSQL%/}/faults"; }

# measure NAME FAULT RUN-ARGS...: runs oltplab run in the background,
# calls FAULT 6 s later, reports how the run ended, and runs oltplab
# check on the database once the server is back (check_target).
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
	grep -E '^  (NOPM|TPM|outage|stall|TPM and NOPM)|SUSPECT|FAILURES|^ *(transaction|new_order)' "$work/out"
	grep -E '^oltplab:' "$work/err"
}

# check_target NAME TARGET: the consistency conditions after the faults.
check_target() {
	"$work/oltplab" check --target "$2" >"$work/out" 2>&1
	echo "== $1: oltplab check exit $?"
	grep -E 'FAIL|passed|failed' "$work/out" | head -3
}

pg_crash() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w restart >/dev/null; }
pg_checkpoint_crash() { psql -q "$OLTPLAB_TEST_POSTGRES" -c CHECKPOINT && pg_crash; }
pg_gone() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w stop >/dev/null; }
pg_back() { as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$OLTPLAB_TEST_POSTGRES_LOG" -w start >/dev/null; }

# tree PID: PID and every process it forked (PostgreSQL's backends sit
# in process groups of their own).
tree() {
	local p
	echo "$1"
	for p in $(ps -o pid= --ppid "$1"); do tree "$p"; done
}
# freeze PID: SIGSTOP to PID's tree for 10 s, then SIGCONT.
freeze() {
	kill -STOP "$1"
	mapfile -t frozen < <(tree "$1")
	kill -STOP "${frozen[@]}"
	sleep 10
	kill -CONT "${frozen[@]}"
	frozen=()
}
pg_freeze() { freeze "$(head -1 "$pgdata/postmaster.pid")"; }
my_freeze() { freeze "$(cat "$mydir/pid")"; }

# A loopback proxy to PORT that holds (forwards nothing, closes nothing,
# accepts and leaves waiting) on SIGUSR1 and forwards again on SIGUSR2.
start_proxy() {
	rm -f "$work/proxy.port"
	python3 - "$1" >"$work/proxy.port.new" <<'PY' &
import signal, socket, sys, threading
go = threading.Event()
go.set()
signal.signal(signal.SIGUSR1, lambda *_: go.clear())
signal.signal(signal.SIGUSR2, lambda *_: go.set())
ln = socket.create_server(("127.0.0.1", 0))
print(ln.getsockname()[1], flush=True)
def pipe(a, b):
    try:
        while (d := a.recv(65536)):
            go.wait()
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def serve(c):
    go.wait()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
while True:
    c, _ = ln.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	proxy=$!
	until [[ -s $work/proxy.port.new ]]; do sleep 0.1; done
	mv "$work/proxy.port.new" "$work/proxy.port"
}
silence() { kill -USR1 "$proxy"; sleep 10; kill -USR2 "$proxy"; }
silence_for_good() { kill -USR1 "$proxy"; }
# via URL: URL with its port replaced by the proxy's.
via() { sed -E "s#@127\.0\.0\.1:[0-9]+#@127.0.0.1:$(cat "$work/proxy.port")#" <<<"$1"; }
port_of() { sed -E 's#.*@127\.0\.0\.1:([0-9]+).*#\1#' <<<"$1"; }
silent_runs() {
	local target=$1 name=$2
	start_proxy "$(port_of "$target")"
	measure "$name silent for 10 s (--answer-timeout 5s)" silence --target "$(via "$target")" --duration 20s --answer-timeout 5s
	measure "$name silent for good (--answer-timeout 5s --reconnect-for 10s)" silence_for_good --target "$(via "$target")" \
		--duration 60s --answer-timeout 5s --reconnect-for 10s
	kill "$proxy"
	wait "$proxy" 2>/dev/null
	proxy=
}

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
measure "PostgreSQL frozen (SIGSTOP) for 10 s" pg_freeze --target "$(pg_target)" --duration 20s
silent_runs "$(pg_target)" PostgreSQL
check_target PostgreSQL "$(pg_target)"

mariadb --no-defaults --socket="$mydir/sock" -uroot -e "CREATE DATABASE faults" || exit 1
"$work/oltplab" build --target "$(my_target)" --warehouses 1 >/dev/null 2>&1 || exit 1
measure "MariaDB kill -9, then started again" my_crash --target "$(my_target)" --duration 20s
measure "MariaDB killed for good (--reconnect-for 10s)" my_kill --target "$(my_target)" --duration 60s --reconnect-for 10s
my_back
measure "MariaDB frozen (SIGSTOP) for 10 s" my_freeze --target "$(my_target)" --duration 20s
silent_runs "$(my_target)" MariaDB
check_target MariaDB "$(my_target)"
