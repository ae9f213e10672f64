#!/usr/bin/env bash
# Private PostgreSQL, MariaDB and T-SQL servers for oltplab's tests and
# benchmarks.
#
#   scripts/testservers.sh run CMD [ARGS...]
#
# installs the Debian packages when they are missing (as root; Chromium too,
# for the report's browser test, fio for the storage benchmarks and
# mariadb-backup for the backup tests, python3-venv for the TPC-H
# reference tests), starts one
# PostgreSQL 15 and one MariaDB server in a fresh temporary directory on free
# loopback ports, exports their admin URLs to CMD as OLTPLAB_TEST_POSTGRES and
# OLTPLAB_TEST_MYSQL (their server logs as OLTPLAB_TEST_POSTGRES_LOG and
# OLTPLAB_TEST_MYSQL_LOG), then stops both servers and removes the directory,
# whatever CMD's outcome. It never touches a server it did not start.
#
# The SQL Server dialect is tested on Babelfish for PostgreSQL (TDS and much
# of T-SQL; not SQL Server), from the prebuilt tarball the project keeps
# beside the repository (../shared/babelfish/babelfish-*.tar.zst, or
# OLTPLAB_BABELFISH_TARBALL), checked against its SHA256SUMS, unpacked into
# the temporary directory and started on free loopback ports (TDS and its
# PostgreSQL), as `nobody` when run as root; its admin URL is exported as
# OLTPLAB_TEST_SQLSERVER (the log as OLTPLAB_TEST_SQLSERVER_LOG). Its
# runtime libraries are installed when missing. Without the tarball it is
# not started: the SQL Server tests then skip, or fail under CI.
#
# OLTPLAB_SERVER_PROFILE=bench starts servers configured for measurement
# (fsync on, larger buffers); the default "test" profile trades durability
# for speed (fsync off), which tests do not measure. OLTPLAB_SERVERS lists
# the servers to start (default: postgres mysql sqlserver).
# OLTPLAB_STATEMENT_STATS=1 loads PostgreSQL's pg_stat_statements (with
# track = none: CREATE EXTENSION pg_stat_statements and SET
# pg_stat_statements.track = all to profile the statements inside the
# functions) and turns MariaDB's performance_schema on (statement digests),
# for profiling the server's work per transaction; off by default, so
# measurements carry neither.
set -euo pipefail

profile=${OLTPLAB_SERVER_PROFILE:-test}
servers=${OLTPLAB_SERVERS:-postgres mysql sqlserver}
pgbin=/usr/lib/postgresql/15/bin
repo=$(cd "$(dirname "$0")/.." && pwd)

log() { echo "testservers: $*" >&2; }

install_missing() {
	local pkgs=()
	# Both engines whatever $servers says: the managed-instance tests start
	# their own PostgreSQL and MariaDB servers (initdb, mariadb-install-db).
	[[ ! -x $pgbin/initdb ]] && pkgs+=(postgresql-15)
	if ! PATH=$PATH:/usr/sbin command -v mariadbd >/dev/null || ! command -v mariadb-install-db >/dev/null; then
		pkgs+=(mariadb-server mariadb-client)
	fi
	# The backup tests use each engine's own tools (pg_basebackup and
	# pg_dump come with postgresql-15; mariadb-backup is a package of its own).
	command -v mariadb-backup >/dev/null || pkgs+=(mariadb-backup)
	# The HTML report is tested in a real headless browser.
	[[ ${OLTPLAB_NEEDS_BROWSER:-1} == 1 ]] && ! command -v chromium >/dev/null && pkgs+=(chromium)
	# The shell completions are tested in each shell they are made for.
	command -v zsh >/dev/null || pkgs+=(zsh)
	command -v fish >/dev/null || pkgs+=(fish)
	# The storage micro-benchmarks are tested with the real fio.
	command -v fio >/dev/null || pkgs+=(fio)
	# The TPC-H reference tests install their reference implementations
	# into a Python virtual environment (scripts/tpchref.sh).
	python3 -c 'import ensurepip, venv' 2>/dev/null || pkgs+=(python3-venv)
	# Babelfish's runtime libraries (the tarball holds the rest).
	if [[ $servers == *sqlserver* ]] && babelfish_tarball >/dev/null; then
		local p
		for p in zstd libicu72 libxml2 libossp-uuid16 libssl3; do
			dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || pkgs+=("$p")
		done
	fi
	((${#pkgs[@]})) || return 0
	if [[ $(id -u) != 0 ]]; then
		log "missing ${pkgs[*]}: install them (apt-get install ${pkgs[*]}) or run as root"
		exit 1
	fi
	log "installing ${pkgs[*]}"
	# Keep the packages' own services from starting: we run private servers only.
	# (only when the machine has no policy of its own, which stays as it is).
	if [[ ! -e /usr/sbin/policy-rc.d && ! -L /usr/sbin/policy-rc.d ]]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' RETURN
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# as_owner runs a command as the unprivileged owner of the data directories.
as_owner() {
	if [[ $(id -u) == 0 ]]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}

start_postgres() {
	local port pw
	port=$(free_port)
	pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
	mkdir -p "$dir/pg"
	echo "$pw" >"$dir/pgpw"
	chown -R "$owner" "$dir/pg" "$dir/pgpw" 2>/dev/null || true
	as_owner "$pgbin/initdb" -D "$dir/pg/data" -U oltplab --pwfile="$dir/pgpw" -A scram-sha-256 \
		-E UTF8 --locale=C.UTF-8 >"$dir/pg/initdb.log" 2>&1 || { cat "$dir/pg/initdb.log" >&2; exit 1; }
	local conf="$dir/pg/data/postgresql.conf"
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $port"
		echo "unix_socket_directories = '$dir/pg'"
		echo "max_connections = 200"
		echo "shared_buffers = 256MB"
		echo "max_wal_size = 4GB"
		echo "track_io_timing = on"
		echo "track_wal_io_timing = on"
		echo "log_min_messages = warning"
		if [[ ${OLTPLAB_STATEMENT_STATS:-0} == 1 ]]; then
			echo "shared_preload_libraries = 'pg_stat_statements'"
			echo "pg_stat_statements.track = none"
		fi
		if [[ $profile == test ]]; then
			echo "fsync = off"
			echo "synchronous_commit = off"
			echo "full_page_writes = off"
		else
			echo "shared_buffers = 1GB"
			echo "checkpoint_timeout = 15min"
		fi
	} >>"$conf"
	as_owner "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 60 start >/dev/null ||
		{ cat "$dir/pg/server.log" >&2; exit 1; }
	export OLTPLAB_TEST_POSTGRES="postgres://oltplab:$pw@127.0.0.1:$port/postgres?sslmode=disable"
	export OLTPLAB_TEST_POSTGRES_LOG="$dir/pg/server.log"
	log "PostgreSQL $("$pgbin/postgres" -V | awk '{print $3}') on 127.0.0.1:$port ($profile profile)"
}

start_mysql() {
	local port pw
	port=$(free_port)
	pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
	mkdir -p "$dir/my"
	chown -R "$owner" "$dir/my" 2>/dev/null || true
	local flags=(--no-defaults --datadir="$dir/my/data" --socket="$dir/my/sock" --port="$port"
		--bind-address=127.0.0.1 --pid-file="$dir/my/pid" --log-error="$dir/my/error.log"
		--skip-name-resolve --local-infile=1 --max-connections=300
		--innodb-buffer-pool-size=512M --innodb-log-file-size=512M --skip-log-bin)
	if [[ $profile == test ]]; then
		flags+=(--innodb-flush-log-at-trx-commit=2 --innodb-doublewrite=0 --sync-binlog=0)
	else
		flags+=(--innodb-buffer-pool-size=1G)
	fi
	[[ ${OLTPLAB_STATEMENT_STATS:-0} == 1 ]] && flags+=(--performance-schema=ON)
	[[ $(id -u) == 0 ]] && flags+=(--user="$owner")
	mariadb-install-db --no-defaults --datadir="$dir/my/data" --auth-root-authentication-method=socket \
		${owner:+--user="$owner"} >"$dir/my/install.log" 2>&1 || { cat "$dir/my/install.log" >&2; exit 1; }
	mariadbd "${flags[@]}" >/dev/null 2>&1 &
	echo $! >"$dir/my/launcher.pid"
	for _ in $(seq 1 120); do
		mariadb-admin --no-defaults --socket="$dir/my/sock" -uroot ping >/dev/null 2>&1 && break
		sleep 0.5
	done
	mariadb-admin --no-defaults --socket="$dir/my/sock" -uroot ping >/dev/null 2>&1 ||
		{ cat "$dir/my/error.log" >&2; exit 1; }
	mariadb --no-defaults --socket="$dir/my/sock" -uroot -e "
		CREATE USER 'oltplab'@'127.0.0.1' IDENTIFIED BY '$pw';
		GRANT ALL PRIVILEGES ON *.* TO 'oltplab'@'127.0.0.1' WITH GRANT OPTION;
		FLUSH PRIVILEGES;"
	export OLTPLAB_TEST_MYSQL="mysql://oltplab:$pw@127.0.0.1:$port/"
	export OLTPLAB_TEST_MYSQL_LOG="$dir/my/error.log"
	log "MariaDB $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port ($profile profile)"
}

# babelfish_tarball prints the Babelfish tarball to use, or fails.
babelfish_tarball() {
	local t=${OLTPLAB_BABELFISH_TARBALL:-}
	if [[ -z $t ]]; then
		local found=("$repo"/../shared/babelfish/babelfish-*.tar.zst)
		t=${found[-1]}
	fi
	[[ -f $t ]] || return 1
	echo "$t"
}

start_sqlserver() {
	local tarball tds pgport pw sums
	if ! tarball=$(babelfish_tarball); then
		log "no Babelfish tarball (../shared/babelfish/babelfish-*.tar.zst or OLTPLAB_BABELFISH_TARBALL): SQL Server tests will skip, or fail under CI"
		return 0
	fi
	sums=$(dirname "$tarball")/SHA256SUMS
	if [[ -f $sums ]]; then
		(cd "$(dirname "$tarball")" && grep " $(basename "$tarball")\$" SHA256SUMS | sha256sum -c --quiet -) ||
			{ log "$tarball does not match $sums"; exit 1; }
	fi
	mkdir -p "$dir/bbf"
	tar -I zstd -xf "$tarball" -C "$dir/bbf"
	bbf=$(echo "$dir"/bbf/babelfish-*/)
	bbf=${bbf%/}
	tds=$(free_port)
	pgport=$(free_port)
	pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
	local start=(env TDS_PORT="$tds" PG_PORT="$pgport" BBF_USER=oltplab BBF_PASS="$pw" "$bbf/bbf-start.sh" "$dir/bbf/data")
	"${start[@]}" >"$dir/bbf/start.log" 2>&1 || { cat "$dir/bbf/start.log" "$dir/bbf/data/server.log" >&2 2>/dev/null; exit 1; }
	# Its PostgreSQL's settings, then a restart for max_connections.
	local sets=("max_connections = 200" "shared_buffers = '256MB'")
	if [[ $profile == test ]]; then
		sets+=("fsync = off" "synchronous_commit = off" "full_page_writes = off")
	fi
	local s
	for s in "${sets[@]}"; do
		bbf_psql -c "ALTER SYSTEM SET $s" >/dev/null
	done
	"$bbf/bbf-start.sh" stop "$dir/bbf/data" >/dev/null 2>&1
	"${start[@]}" >>"$dir/bbf/start.log" 2>&1 || { cat "$dir/bbf/start.log" "$dir/bbf/data/server.log" >&2 2>/dev/null; exit 1; }
	export OLTPLAB_TEST_SQLSERVER="sqlserver://oltplab:$pw@127.0.0.1:$tds?database=master&encrypt=disable"
	export OLTPLAB_TEST_SQLSERVER_LOG="$dir/bbf/data/server.log"
	log "Babelfish $(head -1 "$bbf/VERSIONS.txt" | awk '{print $4}') (T-SQL over TDS) on 127.0.0.1:$tds ($profile profile)"
}

# bbf_psql runs psql on the Babelfish's own PostgreSQL, as its server runs.
bbf_psql() {
	local as=()
	[[ $(id -u) == 0 ]] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	"${as[@]}" env LD_LIBRARY_PATH="$bbf/lib" "$bbf/bin/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$dir/bbf/data" -p "$(sed -n 's/^port = //p' "$dir/bbf/data/postgresql.conf" | tail -1)" -U postgres -d postgres "$@"
}

stop_all() {
	set +e
	if [[ -n ${bbf:-} && -f $dir/bbf/data/postmaster.pid ]]; then
		"$bbf/bbf-start.sh" stop "$dir/bbf/data" >/dev/null 2>&1
	fi
	if [[ -f $dir/pg/data/postmaster.pid ]]; then
		# As the account PostgreSQL runs as: owner has moved on to MariaDB's.
		owner=$pg_owner as_owner "$pgbin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1
	fi
	if [[ -S $dir/my/sock ]]; then
		mariadb-admin --no-defaults --socket="$dir/my/sock" -uroot shutdown >/dev/null 2>&1
	fi
	[[ -f $dir/my/launcher.pid ]] && wait "$(cat "$dir/my/launcher.pid")" 2>/dev/null
	rm -rf "$dir"
}

case ${1:-} in
run)
	shift
	install_missing
	owner=$(id -un)
	[[ $(id -u) == 0 ]] && owner=postgres
	pg_owner=$owner
	dir=$(mktemp -d /tmp/oltplab-servers.XXXXXX)
	chmod 755 "$dir"
	trap stop_all EXIT
	trap 'exit 130' INT TERM
	if [[ $servers == *postgres* ]]; then start_postgres; fi
	if [[ $servers == *mysql* ]]; then
		[[ $(id -u) == 0 ]] && owner=mysql
		start_mysql
	fi
	if [[ $servers == *sqlserver* ]]; then start_sqlserver; fi
	set +e
	"$@"
	rc=$?
	exit $rc
	;;
*)
	echo "usage: scripts/testservers.sh run CMD [ARGS...]" >&2
	exit 2
	;;
esac
