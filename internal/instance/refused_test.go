package instance

import (
	"strings"
	"testing"
)

// refusedSpellings are settings that would reopen what a managed server
// isolates (listening, authentication, file locations, the socket, the
// port), each in the spellings its server accepts: PostgreSQL takes GUC
// names in any case and '-' for '_' on its command line; MariaDB takes
// option names in any case, '-' and '_' alike, unique prefixes, and the
// loose-, skip-, disable-, enable-, maximum- and plugin- forms.
var refusedSpellings = []struct {
	engine      Engine
	name, value string
	canonical   string // the server's own name for it
	why         string // a word of the reason
}{
	{Postgres, "listen_addresses", "*", "listen_addresses", "listening"},
	{Postgres, "LISTEN_ADDRESSES", "*", "listen_addresses", "listening"},
	{Postgres, "listen-addresses", "*", "listen_addresses", "listening"},
	{Postgres, "Listen-Addresses", "0.0.0.0", "listen_addresses", "listening"},
	{Postgres, "port", "5432", "port", "port"},
	{Postgres, "PORT", "5432", "port", "port"},
	{Postgres, "hba_file", "/tmp/trust_hba.conf", "hba_file", "authentication"},
	{Postgres, "hba-file", "/tmp/trust_hba.conf", "hba_file", "authentication"},
	{Postgres, "HBA_File", "/tmp/trust_hba.conf", "hba_file", "authentication"},
	{Postgres, "ident_file", "/tmp/ident", "ident_file", "authentication"},
	{Postgres, "unix_socket_directories", "/tmp", "unix_socket_directories", "socket"},
	{Postgres, "unix-socket-permissions", "0777", "unix_socket_permissions", "socket"},
	{Postgres, "unix_socket_group", "users", "unix_socket_group", "socket"},
	{Postgres, "include", "/tmp/more.conf", "include", "file"},
	{Postgres, "include_dir", "/tmp", "include_dir", "file"},
	{Postgres, "Include-If-Exists", "/tmp/more.conf", "include_if_exists", "file"},
	{Postgres, "config_file", "/tmp/postgresql.conf", "config_file", "file"},
	{Postgres, "data_directory", "/", "data_directory", "file"},
	{Postgres, "external_pid_file", "/etc/passwd", "external_pid_file", "file"},
	{Postgres, "ssl", "on", "ssl", "authentication"},
	{Postgres, "ssl_key_file", "/etc/shadow", "ssl_key_file", "authentication"},
	{Postgres, "ssl-passphrase-command", "sh -c id", "ssl_passphrase_command", "authentication"},
	{Postgres, "password_encryption", "md5", "password_encryption", "authentication"},
	{Postgres, "krb_server_keyfile", "/etc/krb5.keytab", "krb_server_keyfile", "authentication"},
	{Postgres, "krb_caseins_users", "on", "krb_caseins_users", "authentication"},
	{Postgres, "db_user_namespace", "on", "db_user_namespace", "authentication"},
	{Postgres, "log_directory", "/etc", "log_directory", "file"},
	{Postgres, "log_filename", "passwd", "log_filename", "file"},
	{Postgres, "log_file_mode", "0666", "log_file_mode", "file"},
	{Postgres, "archive_command", "cp %p /tmp", "archive_command", "command"},
	{Postgres, "archive_library", "/tmp/lib", "archive_library", "code"},
	{Postgres, "restore_command", "cp /tmp/%f %p", "restore_command", "command"},
	{Postgres, "archive_cleanup_command", "rm -rf /", "archive_cleanup_command", "command"},
	{Postgres, "recovery_end_command", "id", "recovery_end_command", "command"},
	{Postgres, "shared_preload_libraries", "/tmp/evil.so", "shared_preload_libraries", "code"},
	{Postgres, "session_preload_libraries", "$libdir/../../../tmp/evil", "session_preload_libraries", "code"},
	{Postgres, "local-preload-libraries", "/tmp/evil", "local_preload_libraries", "code"},
	{Postgres, "jit_provider", "../../../../tmp/evil", "jit_provider", "code"},
	{Postgres, "dynamic_library_path", "/tmp", "dynamic_library_path", "code"},
	{Postgres, "extension_destdir", "/tmp", "extension_destdir", "code"},
	{Postgres, "bonjour", "on", "bonjour", "listening"},
	{Postgres, "bonjour_name", "db", "bonjour_name", "listening"},
	{Postgres, "primary_conninfo", "host=192.0.2.1", "primary_conninfo", "hosts"},
	{Postgres, "shared_buffers", "1GB", "shared_buffers", "memory"},
	{Postgres, "Max-Connections", "1000", "max_connections", "max_connections"},

	{MariaDB, "bind-address", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "bind_address", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "BIND-ADDRESS", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "bind", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "Bind", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "bind-addr", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "loose-bind-address", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "loose_bind", "0.0.0.0", "bind-address", "listening"},
	{MariaDB, "port", "3306", "port", "port"},
	{MariaDB, "loose-port", "3306", "port", "port"},
	{MariaDB, "maximum-port", "3306", "port", "port"},
	{MariaDB, "socket", "/tmp/mysql.sock", "socket", "socket"},
	{MariaDB, "sock", "/tmp/mysql.sock", "socket", "socket"},
	{MariaDB, "extra-port", "3307", "extra-port", "port"},
	{MariaDB, "skip-networking", "0", "skip-networking", "listening"},
	{MariaDB, "skip_networking", "0", "skip-networking", "listening"},
	{MariaDB, "proxy-protocol-networks", "*", "proxy-protocol-networks", "authentication"},
	{MariaDB, "skip-grant-tables", "1", "skip-grant-tables", "authentication"},
	{MariaDB, "skip-grant", "1", "skip-grant-tables", "authentication"},
	{MariaDB, "Skip_Grant_Tables", "1", "skip-grant-tables", "authentication"},
	{MariaDB, "enable-skip-grant-tables", "", "skip-grant-tables", "authentication"},
	{MariaDB, "loose-skip-grant-tables", "", "skip-grant-tables", "authentication"},
	{MariaDB, "loose-enable-skip-grant", "", "skip-grant-tables", "authentication"},
	{MariaDB, "disable-skip-name-resolve", "", "skip-name-resolve", "authentication"},
	{MariaDB, "skip-name-resolve", "0", "skip-name-resolve", "authentication"},
	{MariaDB, "unix-socket", "OFF", "unix-socket", "authentication"},
	{MariaDB, "old-passwords", "1", "old-passwords", "authentication"},
	{MariaDB, "secure-auth", "0", "secure-auth", "authentication"},
	{MariaDB, "require-secure-transport", "1", "require-secure-transport", "authentication"},
	{MariaDB, "ssl", "1", "ssl", "authentication"},
	{MariaDB, "ssl-key", "/etc/shadow", "ssl-key", "authentication"},
	{MariaDB, "tls-version", "TLSv1.0", "tls-version", "authentication"},
	{MariaDB, "user", "root", "user", "account"},
	{MariaDB, "chroot", "/", "chroot", "file"},
	{MariaDB, "datadir", "/", "datadir", "file"},
	{MariaDB, "basedir", "/", "basedir", "file"},
	{MariaDB, "tmpdir", "/", "tmpdir", "file"},
	{MariaDB, "language", "/etc", "language", "file"},
	{MariaDB, "lc-messages-dir", "/etc", "lc-messages-dir", "file"},
	{MariaDB, "character-sets-dir", "/etc", "character-sets-dir", "file"},
	{MariaDB, "pid-file", "/etc/passwd", "pid-file", "file"},
	{MariaDB, "log-error", "/etc/passwd", "log-error", "file"},
	{MariaDB, "general-log-file", "/etc/passwd", "general-log-file", "file"},
	{MariaDB, "general_log_file", "/etc/passwd", "general-log-file", "file"},
	{MariaDB, "slow-query-log-file", "/etc/passwd", "slow-query-log-file", "file"},
	{MariaDB, "log-slow-query-file", "/etc/passwd", "log-slow-query-file", "file"},
	{MariaDB, "log-bin", "/etc/binlog", "log-bin", "file"},
	{MariaDB, "log-bin-index", "/etc/binlog.index", "log-bin-index", "file"},
	{MariaDB, "relay-log", "relay", "relay-log", "file"},
	{MariaDB, "log-basename", "/etc/x", "log-basename", "file"},
	{MariaDB, "log-tc", "/etc/x", "log-tc", "file"},
	{MariaDB, "log-isam", "/etc/x", "log-isam", "file"},
	{MariaDB, "log-ddl-recovery", "/etc/x", "log-ddl-recovery", "file"},
	{MariaDB, "secure-file-priv", "", "secure-file-priv", "file"},
	{MariaDB, "symbolic-links", "1", "symbolic-links", "file"},
	{MariaDB, "ft-stopword-file", "/etc/shadow", "ft-stopword-file", "file"},
	{MariaDB, "innodb-data-home-dir", "/", "innodb-data-home-dir", "file"},
	{MariaDB, "plugin-innodb-data-home-dir", "/", "innodb-data-home-dir", "file"},
	{MariaDB, "innodb_data_file_path", "/dev/sda:10Gnewraw", "innodb-data-file-path", "file"},
	{MariaDB, "innodb-temp-data-file-path", "/tmp/x:12M", "innodb-temp-data-file-path", "file"},
	{MariaDB, "innodb_undo_directory", "/", "innodb-undo-directory", "file"},
	{MariaDB, "innodb-tmpdir", "/", "innodb-tmpdir", "file"},
	{MariaDB, "innodb-buffer-pool-filename", "/etc/passwd", "innodb-buffer-pool-filename", "file"},
	{MariaDB, "aria-log-dir-path", "/", "aria-log-dir-path", "file"},
	{MariaDB, "slave-load-tmpdir", "/", "slave-load-tmpdir", "file"},
	{MariaDB, "plugin-dir", "/tmp", "plugin-dir", "code"},
	{MariaDB, "plugin-load", "evil=/tmp/evil.so", "plugin-load", "code"},
	{MariaDB, "plugin_load_add", "evil.so", "plugin-load-add", "code"},
	{MariaDB, "allow-suspicious-udfs", "1", "allow-suspicious-udfs", "code"},
	{MariaDB, "init-file", "/tmp/grant.sql", "init-file", "oltplab"},
	{MariaDB, "bootstrap", "", "bootstrap", "authentication"},
	{MariaDB, "wsrep-provider", "/tmp/evil.so", "wsrep-provider", "hosts"},
	{MariaDB, "wsrep_on", "1", "wsrep-on", "hosts"},
	{MariaDB, "wsrep-cluster-address", "gcomm://192.0.2.1", "wsrep-cluster-address", "hosts"},
	{MariaDB, "feedback", "ON", "feedback", "hosts"},
	{MariaDB, "feedback-url", "http://192.0.2.1/", "feedback-url", "hosts"},
	{MariaDB, "getopt-prefix-matching", "1", "getopt-prefix-matching", "oltplab"},
	{MariaDB, "defaults-file", "/tmp/my.cnf", "defaults-file", "file"},
	{MariaDB, "no-defaults", "", "no-defaults", "file"},
	{MariaDB, "innodb-buffer-pool-size", "1G", "innodb-buffer-pool-size", "memory"},
	{MariaDB, "max_connections", "1000", "max-connections", "max_connections"},
	{MariaDB, "innodb-log-group-home-dir", "/", "innodb-log-group-home-dir", "wal_dir"},
}

// TestRefusedSettings: Validate refuses every spelling of a setting that
// would undo the isolation of a managed server, with one line naming the
// setting as given, the server's own name for it, and why.
func TestRefusedSettings(t *testing.T) {
	host := Host{CPUs: CPUSet{0, 1}}
	for _, tt := range refusedSpellings {
		t.Run(string(tt.engine)+"/"+tt.name, func(t *testing.T) {
			s := Spec{Name: "x", Engine: tt.engine, DataDir: "/data/x", Settings: map[string]string{tt.name: tt.value}}
			err := s.Validate(host)
			if err == nil {
				t.Fatalf("%s=%s: got valid, want refused", tt.name, tt.value)
			}
			if got := KindOf(err); got != KindSpec {
				t.Errorf("kind: got %s, want spec (%v)", got, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, want := range []string{"setting " + tt.name, tt.canonical, tt.why} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q: want it to say %q", msg, want)
				}
			}
		})
	}
}

// TestAllowedSettings: settings that tune a server, including those whose
// names begin like a refused one, stay allowed.
func TestAllowedSettings(t *testing.T) {
	host := Host{CPUs: CPUSet{0, 1}}
	for _, tt := range []struct {
		engine      Engine
		name, value string
	}{
		{Postgres, "work_mem", "64MB"},
		{Postgres, "Work-Mem", "64MB"},
		{Postgres, "fsync", "off"},
		{Postgres, "wal_level", "logical"},
		{Postgres, "logging_collector", "on"},
		{Postgres, "log_min_duration_statement", "0"},
		{Postgres, "authentication_timeout", "30s"},
		{Postgres, "shared_preload_libraries", "pg_stat_statements"},
		{Postgres, "shared_preload_libraries", "pg_stat_statements, auto_explain"},
		{Postgres, "jit_provider", "llvmjit"},
		{Postgres, "auto_explain.log_min_duration", "10ms"},
		{Postgres, "portal_thing.x", "1"},
		{MariaDB, "innodb_log_file_size", "256M"},
		{MariaDB, "innodb-flush-log-at-trx-commit", "2"},
		{MariaDB, "slow_query_log", "1"},
		{MariaDB, "slow-query-log", "ON"},
		{MariaDB, "general-log", "1"},
		{MariaDB, "log-slow-query", "1"},
		{MariaDB, "log-bin", ""},
		{MariaDB, "log-bin", "mariadb-bin"},
		{MariaDB, "skip-log-bin", ""},
		{MariaDB, "sync-binlog", "1"},
		{MariaDB, "loose-innodb-log-file-size", "256M"},
		{MariaDB, "performance_schema", "ON"},
		{MariaDB, "port-open-timeout", "10"},
		{MariaDB, "innodb-file-per-table", "1"},
		{MariaDB, "local-infile", "0"},
	} {
		t.Run(string(tt.engine)+"/"+tt.name+"="+tt.value, func(t *testing.T) {
			s := Spec{Name: "x", Engine: tt.engine, DataDir: "/data/x", Settings: map[string]string{tt.name: tt.value}}
			if err := s.Validate(host); err != nil {
				t.Errorf("got %v, want valid", err)
			}
		})
	}
}

// TestSettingNamedTwice: two spellings of one setting are refused (which
// of them the server would take depends on the order of its arguments).
func TestSettingNamedTwice(t *testing.T) {
	host := Host{CPUs: CPUSet{0, 1}}
	for _, tt := range []struct {
		engine Engine
		a, b   string
	}{
		{Postgres, "work_mem", "Work-Mem"},
		{MariaDB, "innodb_log_file_size", "innodb-log-file-size"},
	} {
		s := Spec{Name: "x", Engine: tt.engine, DataDir: "/data/x", Settings: map[string]string{tt.a: "1MB", tt.b: "2MB"}}
		err := s.Validate(host)
		if err == nil || KindOf(err) != KindSpec || !strings.Contains(err.Error(), tt.a) || !strings.Contains(err.Error(), tt.b) {
			t.Errorf("%s and %s: got %v, want a spec error naming both", tt.a, tt.b, err)
		}
	}
}
