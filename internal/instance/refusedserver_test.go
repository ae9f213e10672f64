package instance

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// engineOutput runs the engine's server binary with args, as the
// engine's account when the test runs as root (postgres refuses root).
func engineOutput(t *testing.T, e Engine, args ...string) string {
	t.Helper()
	bins, err := engines[e].locate("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bins.Server, args...)
	cmd.Dir = os.TempDir()
	if os.Geteuid() == 0 {
		acct, err := lookupAccount(engines[e].osUser())
		if err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.credential()}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", bins.Server, strings.Join(args, " "), err)
	}
	return string(out)
}

// TestSettingTablesKnowTheServer holds each engine's table of refused
// settings (refused.go) against the installed server: every name it
// refuses is one the server knows, and every setting of the server that
// concerns listening, authentication, files, code, commands or other
// hosts is either refused or reviewed here as harmless. A new server
// version with a new such setting fails this test until someone decides.
func TestSettingTablesKnowTheServer(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		needEngine(t, Postgres)
		// postgres --describe-config: name, context, group, ... per line.
		groups := map[string]string{}
		for _, line := range strings.Split(engineOutput(t, Postgres, "--describe-config"), "\n") {
			if f := strings.Split(line, "\t"); len(f) > 2 {
				groups[f[0]] = f[2]
			}
		}
		if len(groups) < 200 {
			t.Fatalf("postgres --describe-config listed %d settings", len(groups))
		}
		// Not listed by --describe-config, or not in every version.
		notListed := map[string]bool{"include": true, "include_dir": true, "include_if_exists": true, "config_file": true,
			"stats_temp_directory": true, "db_user_namespace": true, "promote_trigger_file": true}
		for _, r := range postgresRefused {
			if r.prefix || notListed[r.name] {
				continue
			}
			if _, ok := groups[r.name]; !ok {
				t.Errorf("refused setting %s is not a setting of this PostgreSQL", r.name)
			}
		}
		watched := regexp.MustCompile(`^(Connections and Authentication|File Locations|Client Connection Defaults / (Shared Library Preloading|Other Defaults)|Write-Ahead Log / Archiv|Reporting and Logging / Where to Log|Replication / Standby Servers)`)
		reviewed := map[string]string{
			"authentication_timeout":           "a time limit; opens nothing",
			"client_connection_check_interval": "a time interval",
			"superuser_reserved_connections":   "a count within max_connections",
			"tcp_keepalives_count":             "keepalives on connections already made",
			"tcp_keepalives_idle":              "keepalives on connections already made",
			"tcp_keepalives_interval":          "keepalives on connections already made",
			"tcp_user_timeout":                 "a time limit",
			"gin_fuzzy_search_limit":           "a query limit",
			"archive_mode":                     "archiving runs only archive_command or archive_library, both refused",
			"archive_timeout":                  "a time interval",
			"event_source":                     "Windows only",
			"log_destination":                  "stderr, csvlog, jsonlog in the data directory, or the host's syslog",
			"log_rotation_age":                 "rotation of the refused log_filename",
			"log_rotation_size":                "rotation of the refused log_filename",
			"log_truncate_on_rotation":         "rotation of the refused log_filename",
			"logging_collector":                "writes the log into log_directory, refused: the data directory's own",
			"syslog_facility":                  "the host's syslog",
			"syslog_ident":                     "the host's syslog",
			"syslog_sequence_numbers":          "the host's syslog",
			"syslog_split_messages":            "the host's syslog",
			"hot_standby":                      "a standby only; primary_conninfo is refused",
			"hot_standby_feedback":             "a standby only",
			"max_standby_archive_delay":        "a standby only",
			"max_standby_streaming_delay":      "a standby only",
			"primary_slot_name":                "a standby only, of the refused primary_conninfo",
			"recovery_min_apply_delay":         "a standby only",
			"wal_receiver_create_temp_slot":    "a standby only",
			"wal_receiver_status_interval":     "a standby only",
			"wal_receiver_timeout":             "a standby only",
			"wal_retrieve_retry_interval":      "a standby only",
		}
		for name, group := range groups {
			if !watched.MatchString(group) || reviewed[name] != "" {
				continue
			}
			if _, _, refused := (postgresEngine{}).refused(name, "/x"); !refused {
				t.Errorf("setting %s (%s) is neither refused nor reviewed", name, group)
			}
		}
	})
	t.Run("mariadb", func(t *testing.T) {
		needEngine(t, MariaDB)
		help := engineOutput(t, MariaDB, "--no-defaults", "--verbose", "--help")
		options := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^  (?:-., )?--([a-z0-9_-]+)`).FindAllStringSubmatch(help, -1) {
			options[m[1]] = true
		}
		if len(options) < 400 {
			t.Fatalf("mariadbd --verbose --help listed %d options", len(options))
		}
		// Read before the others (load_defaults), not listed by --help.
		optionFiles := map[string]bool{"no-defaults": true, "defaults-file": true, "defaults-extra-file": true, "defaults-group-suffix": true}
		for _, r := range mariadbRefused {
			known := options[r.name] || optionFiles[r.name]
			for o := range options {
				known = known || (r.prefix && strings.HasPrefix(o, r.name))
			}
			if !known {
				t.Errorf("refused option %s is not an option of this mariadbd", r.name)
			}
		}
		for o := range options {
			for _, r := range mariadbRefused {
				if o != r.name && strings.HasPrefix(r.name, o) && !mariadbShortOptions[o] {
					if _, _, refused := (mariadbEngine{}).refused(o, ""); !refused {
						t.Errorf("option %s begins refused %s but is neither refused nor in mariadbShortOptions", o, r.name)
					}
				}
			}
		}
		for s := range mariadbShortOptions {
			if !options[s] {
				t.Errorf("mariadbShortOptions: %s is not an option of this mariadbd", s)
			}
		}
		watched := regexp.MustCompile(`dir|file|path|sock|port|bind|addr|plugin|ssl|tls|auth|passw|proxy|network|grant|resolve|chroot|wsrep|feedback|librar|cmd|command|secure|symbolic|udf|pipe|^user$|^debug$|^log-[a-z]+$`)
		reviewed := map[string]string{}
		for _, names := range []struct{ why, names string }{
			{"sizes, counts and limits", "aria-log-file-size aria-max-sort-file-size aria-pagecache-file-hash-size binlog-file-cache-size " +
				"innodb-log-file-size innodb-open-files key-cache-file-hash-size myisam-max-sort-file-size open-files-limit " +
				"performance-schema-max-file-classes performance-schema-max-file-handles performance-schema-max-file-instances " +
				"performance-schema-max-socket-classes performance-schema-max-socket-instances max-password-errors " +
				"innodb-max-dirty-pages-pct innodb-max-dirty-pages-pct-lwm port-open-timeout progress-report-time"},
			{"how files in the data directory are written", "aria-sync-log-dir binlog-direct-non-transactional-updates " +
				"innodb-disable-sort-file-cache innodb-file-per-table innodb-log-file-buffering innodb-log-file-mmap " +
				"innodb-status-file keep-files-on-create core-file encrypt-tmp-files innodb-deadlock-report"},
			{"names inside the server, not paths", "character-set-filesystem ignore-db-dirs log-output log-warnings plugin-maturity"},
			{"stricter or shorter-lived passwords; oltplab sets its password at every start", "default-password-lifetime " +
				"disconnect-on-expired-password strict-password-validation secure-timestamp"},
			{"LOAD DATA LOCAL, which oltplab's loader uses", "local-infile"},
			{"what a replica reports to its primary; a managed server has none", "report-host report-password report-port report-user show-slave-auth-info"},
		} {
			for _, n := range strings.Fields(names.names) {
				reviewed[n] = names.why
			}
		}
		for o := range options {
			if !watched.MatchString(o) || reviewed[o] != "" {
				continue
			}
			if _, _, refused := (mariadbEngine{}).refused(o, "/x"); !refused {
				t.Errorf("option %s is neither refused nor reviewed", o)
			}
		}
	})
}
