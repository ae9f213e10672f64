"""Reference TPC-H figures for oltplab's tests (run by scripts/tpchref.sh).

duckdb-sums SF CHILDREN STEP
    Generates the rows with DuckDB's dbgen (all, or chunk STEP of CHILDREN)
    and prints per table: rows, the range of the table's own row numbers
    (from 1: keys, orders numbered as dbgen numbers them) and a checksum of
    the columns DuckDB generates as dbgen does. The checksum: each row's
    columns in dbgen's flat-file form joined by '|', hashed with MD5; the
    first 8 bytes of each digest, big-endian, summed modulo 2^64.
answers SF DIR
    Loads the CSV files tpchgen-cli wrote into DIR into DuckDB, runs the
    22 queries of DuckDB's tpch extension (the validation parameters) and
    prints their rows, every value as text. One change to DuckDB's texts:
    Q11's FRACTION is 0.0001/SF (clause 2.4.11.3; qgen -d writes it so at
    every scale), where DuckDB keeps SF 1's 0.0001.
"""
import decimal
import glob
import hashlib
import json
import os
import sys

import duckdb
import duckdb_extension_tpch

# Columns DuckDB's dbgen does not generate as dbgen does: its comments and
# addresses come from another text generator.
DIFFERENT = {"p_comment", "ps_comment", "s_address", "s_comment", "c_address", "c_comment",
             "o_comment", "l_comment", "n_comment", "r_comment"}

TABLES = ["part", "partsupp", "supplier", "customer", "orders", "lineitem", "nation", "region"]

# The column whose values number each table's rows (orders keys are sparse).
ROW_NUMBER = {
    "part": "p_partkey", "partsupp": "ps_partkey", "supplier": "s_suppkey",
    "customer": "c_custkey", "orders": "((o_orderkey >> 5) << 3) | (o_orderkey & 7)",
    "lineitem": "((l_orderkey >> 5) << 3) | (l_orderkey & 7)",
    "nation": "n_nationkey + 1", "region": "r_regionkey + 1",
}


def connect():
    pkg = os.path.dirname(duckdb_extension_tpch.__file__)
    ext = glob.glob(os.path.join(pkg, "extensions", "*", "tpch.duckdb_extension"))
    if not ext:
        sys.exit("tpchref: no tpch.duckdb_extension under " + pkg)
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("LOAD '%s'" % ext[0])
    return con


def text(v):
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def dbgen_form(table, column, typ):
    # dbgen writes L_QUANTITY as an integer; other decimals with two digits.
    if column == "l_quantity":
        return "CAST(l_quantity AS BIGINT)::VARCHAR"
    return "CAST(%s AS VARCHAR)" % column


def duckdb_sums(sf, children, step):
    con = connect()
    if children > 1:
        con.execute("CALL dbgen(sf=?, children=?, step=?)", [sf, children, step])
    else:
        con.execute("CALL dbgen(sf=?)", [sf])
    out = {}
    for t in TABLES:
        cols = [(c, typ) for c, typ in con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                                   "WHERE table_name = ? ORDER BY column_index", [t]).fetchall()]
        keep = [c for c, _ in cols if c not in DIFFERENT]
        line = " || '|' || ".join(dbgen_form(t, c, typ) for c, typ in cols if c not in DIFFERENT)
        cur = con.execute("SELECT %s FROM %s" % (line, t))
        total, n = 0, 0
        while True:
            batch = cur.fetchmany(100000)
            if not batch:
                break
            for (s,) in batch:
                total += int.from_bytes(hashlib.md5(s.encode()).digest()[:8], "big")
                n += 1
        first, last = con.execute("SELECT min(%s), max(%s) FROM %s" % (ROW_NUMBER[t], ROW_NUMBER[t], t)).fetchone()
        out[t] = {"rows": n, "sum": str(total % (1 << 64)), "columns": keep, "first": first, "last": last}
    json.dump(out, sys.stdout, indent=1)


def answers(sf, d):
    con = connect()
    con.execute("CALL dbgen(sf=0)")  # the schema, empty
    for t in TABLES:
        con.execute("COPY %s FROM '%s' (FORMAT csv, HEADER true)" % (t, os.path.join(d, t + ".csv")))
    out = {}
    for nr, query in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall():
        if nr == 11:
            if "* 0.0001000000" not in query:
                sys.exit("tpchref: DuckDB's Q11 does not have the FRACTION 0.0001000000")
            query = query.replace("* 0.0001000000", "* %.10f" % (0.0001 / sf))
        rows = con.execute(query).fetchall()
        out[str(nr)] = [[text(v) for v in r] for r in rows]
    json.dump(out, sys.stdout, indent=1)


def main():
    cmd = sys.argv[1]
    if cmd == "duckdb-sums":
        duckdb_sums(float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "answers":
        answers(float(sys.argv[2]), sys.argv[3])
    else:
        sys.exit("tpchref: unknown command " + cmd)


if __name__ == "__main__":
    main()
