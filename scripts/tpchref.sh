#!/usr/bin/env bash
# Reference TPC-H data and answers for oltplab's tests, from two
# implementations independent of oltplab, installed from PyPI into a
# private virtual environment:
#   tpchgen-cli   tpchgen-rs, which writes dbgen's rows byte for byte;
#   duckdb with duckdb-extension-tpch
#                 DuckDB's own dbgen (equal to dbgen's rows except for the
#                 comments and addresses) and its query engine.
#
#   scripts/tpchref.sh tbl SF DIR
#       dbgen's flat files of scale factor SF, one per table, into DIR.
#   scripts/tpchref.sh duckdb-sums SF [CHILDREN STEP]
#       JSON: per table, the rows DuckDB's dbgen generates (all, or its
#       chunk STEP of CHILDREN, STEP from 0), their range and a checksum
#       of the columns it generates as dbgen does.
#   scripts/tpchref.sh answers SF
#       JSON: the answers of the 22 queries with the validation
#       parameters, DuckDB running its own query texts over tpchgen-cli's
#       rows (kept in the cache after the first call).
#
# The environment is created once under ${OLTPLAB_TPCHREF_CACHE:-~/.cache/oltplab};
# a lock serialises its creation between concurrent test packages. Exit
# status 3: Python, its venv module or the packages could not be had (the
# tests then skip, or fail under CI).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
packages="duckdb==1.5.5 duckdb-extension-tpch==1.5.5 tpchgen-cli==4.0.0"
cache=${OLTPLAB_TPCHREF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oltplab}
venv=$cache/tpchref-$(printf %s "$packages" | sha256sum | cut -c1-12)

unavailable() { echo "tpchref: $*" >&2; exit 3; }

setup() {
	command -v python3 >/dev/null || unavailable "python3 not found"
	mkdir -p "$cache"
	exec 9>"$cache/tpchref.lock"
	flock 9
	if [[ ! -x $venv/bin/tpchgen-cli ]]; then
		rm -rf "$venv"
		python3 -m venv "$venv" >&2 || { rm -rf "$venv"; unavailable "python3 -m venv failed"; }
		# shellcheck disable=SC2086
		"$venv/bin/pip" install --quiet --disable-pip-version-check $packages >&2 ||
			{ rm -rf "$venv"; unavailable "pip install $packages failed"; }
	fi
	flock -u 9
}

cmd=${1:-}
sf=${2:-}
[[ -n $cmd && -n $sf ]] || { sed -n '2,/^set /p' "$0" | sed 's/^# \{0,1\}//' | head -n -1 >&2; exit 2; }
setup
case $cmd in
tbl)
	dir=${3:?tbl needs a directory}
	"$venv/bin/tpchgen-cli" tbl --scale-factor "$sf" --output-dir "$dir" --overwrite >&2
	;;
duckdb-sums)
	exec "$venv/bin/python" "$here/tpchref.py" duckdb-sums "$sf" "${3:-1}" "${4:-0}"
	;;
answers)
	out=$venv/answers-$sf.json
	exec 8>"$venv/answers.lock"
	flock 8
	if [[ ! -s $out ]]; then
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		"$venv/bin/tpchgen-cli" csv --scale-factor "$sf" --output-dir "$tmp" >&2
		"$venv/bin/python" "$here/tpchref.py" answers "$sf" "$tmp" >"$out.tmp"
		mv "$out.tmp" "$out"
	fi
	cat "$out"
	;;
*)
	echo "tpchref: unknown command $cmd (tbl, duckdb-sums, answers)" >&2
	exit 2
	;;
esac
