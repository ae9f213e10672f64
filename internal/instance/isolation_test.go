package instance

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// listeners are the local addresses of the TCP sockets listening on port,
// from /proc/net/tcp and tcp6 ("127.0.0.1", "0.0.0.0", "::", ...).
func listeners(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			if f == "/proc/net/tcp6" { // no IPv6 on this host
				continue
			}
			t.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // TCP_LISTEN
				continue
			}
			addr, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(p) != port {
				continue
			}
			out = append(out, procNetAddr(addr))
		}
		file.Close()
	}
	return out
}

// procNetAddr reads an address of /proc/net/tcp{,6}: 32-bit words in
// host (little-endian) order.
func procNetAddr(h string) string {
	b := make([]byte, 0, 16)
	for i := 0; i+8 <= len(h); i += 8 {
		w, _ := strconv.ParseUint(h[i:i+8], 16, 32)
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	if len(b) == 4 {
		return strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) + "." + strconv.Itoa(int(b[3]))
	}
	if strings.Trim(h, "0") == "" {
		return "::"
	}
	return h
}

// assertLoopbackOnly fails unless the server listens on port, and on
// 127.0.0.1 only.
func assertLoopbackOnly(t *testing.T, port int) {
	t.Helper()
	got := listeners(t, port)
	if len(got) == 0 {
		t.Fatalf("nothing listens on port %d", port)
	}
	for _, a := range got {
		if a != "127.0.0.1" {
			t.Errorf("port %d listens on %s, want 127.0.0.1 only (all: %v)", port, a, got)
		}
	}
}

// TestManagedPostgresStaysIsolated: a managed PostgreSQL started with
// settings a spec may give (in the spellings the server accepts) listens
// on 127.0.0.1 only and authenticates with oltplab's own files.
func TestManagedPostgresStaysIsolated(t *testing.T) {
	needEngine(t, Postgres)
	ctx := context.Background()
	settings := map[string]string{"Work-Mem": "8MB", "shared_preload_libraries": "pg_stat_statements",
		"authentication_timeout": "20s", "log-min-duration-statement": "-1"}
	for k, v := range fastSettings {
		settings[k] = v
	}
	spec := Spec{Name: "pg-isolated", Engine: Postgres, DataDir: fromTemplate(t, Postgres, "pg-isolated"), Settings: settings}
	inst, err := Start(ctx, spec, testLog(t))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer inst.Stop(ctx)
	assertLoopbackOnly(t, inst.Port())
	conn, err := pgx.Connect(ctx, rawURL(inst.Target(), ""))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	for k, want := range map[string]string{"listen_addresses": "127.0.0.1", "hba_file": filepath.Join(inst.runDir, "pg_hba.conf"),
		"work_mem": "8MB", "shared_preload_libraries": "pg_stat_statements"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&got); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", k, got, err, want)
		}
	}
}

// TestManagedMariaDBStaysIsolated: a managed MariaDB started with options
// a spec may give listens on 127.0.0.1 only, reads whole option names only
// (no prefix of bind-address can reach it) and reports to nobody
// (feedback plugin off).
func TestManagedMariaDBStaysIsolated(t *testing.T) {
	needEngine(t, MariaDB)
	ctx := context.Background()
	spec := Spec{Name: "my-isolated", Engine: MariaDB, DataDir: filepath.Join(testRoot, "my-isolated"),
		Settings: map[string]string{"slow_query_log": "1", "Innodb_Flush_Log_At_Trx_Commit": "2", "loose-innodb-log-file-size": "64M"}}
	inst, err := Start(ctx, spec, testLog(t))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer inst.Stop(ctx)
	assertLoopbackOnly(t, inst.Port())
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(inst.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cmdline), "\x00--skip-getopt-prefix-matching\x00") {
		t.Errorf("mariadbd runs without --skip-getopt-prefix-matching: %q", cmdline)
	}
	tg := inst.Target()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = tg.URL.User.Username(), tg.Password.Reveal(), "tcp", tg.URL.Host, DatabaseName
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	for k, want := range map[string]string{"bind_address": "127.0.0.1", "skip_networking": "0", "slow_query_log": "1",
		"innodb_flush_log_at_trx_commit": "2"} {
		var got string
		if err := db.QueryRowContext(ctx, "SELECT @@"+k).Scan(&got); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", k, got, err, want)
		}
	}
	var feedback string
	err = db.QueryRowContext(ctx, "SELECT plugin_status FROM information_schema.plugins WHERE plugin_name = 'FEEDBACK'").Scan(&feedback)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if feedback == "ACTIVE" {
		t.Errorf("the feedback plugin is active: it would report to mariadb.org")
	}
}
