package instance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    Size
		wantErr bool
	}{
		{"512MB", 512 << 20, false},
		{"512MiB", 512 << 20, false},
		{"1GiB", 1 << 30, false},
		{"1.5GB", 3 << 29, false},
		{"64kB", 64 << 10, false},
		{"64 KB", 64 << 10, false},
		{"2T", 2 << 40, false},
		{"1048576", 1 << 20, false},
		{"100B", 100, false},
		{"", 0, true},
		{"MB", 0, true},
		{"-1GB", 0, true},
		{"1 parsec", 0, true},
		{"1e30GB", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err: got %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSizeText(t *testing.T) {
	for _, tt := range []struct {
		s    Size
		want string
	}{{512 << 20, "512MiB"}, {1 << 30, "1GiB"}, {1536 << 20, "1536MiB"}, {100, "100B"}, {0, "0B"}, {3 << 10, "3KiB"}} {
		b, err := tt.s.MarshalText()
		if err != nil || string(b) != tt.want {
			t.Errorf("%d: got %q, %v; want %q", tt.s, b, err, tt.want)
		}
		var back Size
		if err := back.UnmarshalText(b); err != nil || back != tt.s {
			t.Errorf("%q: round trip got %d, %v", b, back, err)
		}
	}
}

func TestCPUList(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"0", "0", false},
		{"0-3", "0-3", false},
		{"3,0-1,2", "0-3", false},
		{"0,2,4-6", "0,2,4-6", false},
		{" 1 ", "1", false},
		{"1-0", "", true},
		{"a", "", true},
		{"-1", "", true},
		{"0-", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCPUList(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err: got %v, want error %v", err, tt.wantErr)
			}
			if got.String() != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEngineText(t *testing.T) {
	for in, want := range map[string]Engine{"postgresql": Postgres, "PG": Postgres, "mysql": MariaDB, "mariadb": MariaDB, "sqlite": SQLite} {
		var e Engine
		if err := e.UnmarshalText([]byte(in)); err != nil || e != want {
			t.Errorf("%s: got %q, %v; want %q", in, e, err, want)
		}
	}
	var e Engine
	if err := e.UnmarshalText([]byte("oracle")); err == nil {
		t.Error("oracle: want an error")
	}
}

// TestValidate: every bad spec gets a one-line error of the right kind.
func TestValidate(t *testing.T) {
	host := Host{CPUs: CPUSet{0, 1}}
	ok := Spec{Engine: Postgres, DataDir: "/data/pg"}
	tests := []struct {
		name string
		edit func(*Spec)
		want Kind // KindOther: valid
	}{
		{"valid", func(*Spec) {}, KindOther},
		{"valid full", func(s *Spec) {
			s.Name, s.WALDir, s.Memory, s.MemoryLimit, s.CPUs = "pg-1", "/wal", 1<<30, 2<<30, "0-1"
			s.IOLimit = IOLimit{ReadIOPS: 100, WriteMBps: 50}
			s.Settings = map[string]string{"work_mem": "64MB"}
			s.MaxConnections = 1024
		}, KindOther},
		{"no engine", func(s *Spec) { s.Engine = "" }, KindSpec},
		{"unknown engine", func(s *Spec) { s.Engine = "oracle" }, KindSpec},
		{"no data dir", func(s *Spec) { s.DataDir = " " }, KindSpec},
		{"bad name", func(s *Spec) { s.Name = "a/b" }, KindSpec},
		{"negative memory", func(s *Spec) { s.Memory = -1 }, KindSpec},
		{"limit below memory", func(s *Spec) { s.Memory, s.MemoryLimit = 1<<30, 1<<29 }, KindSpec},
		{"negative iops", func(s *Spec) { s.IOLimit.WriteIOPS = -5 }, KindSpec},
		{"tiny MB/s", func(s *Spec) { s.IOLimit.ReadMBps = 1e-9 }, KindSpec},
		{"bad cpus", func(s *Spec) { s.CPUs = "zero" }, KindSpec},
		{"cpus beyond host", func(s *Spec) { s.CPUs = "0-3" }, KindCPUs},
		{"managed setting", func(s *Spec) { s.Settings = map[string]string{"port": "5432"} }, KindSpec},
		{"managed setting any case", func(s *Spec) { s.Settings = map[string]string{"Shared_Buffers": "1GB"} }, KindSpec},
		{"bad setting name", func(s *Spec) { s.Settings = map[string]string{"a b": "1"} }, KindSpec},
		{"multi-line value", func(s *Spec) { s.Settings = map[string]string{"work_mem": "1MB\nport=1"} }, KindSpec},
		{"mariadb managed setting", func(s *Spec) {
			s.Engine, s.Settings = MariaDB, map[string]string{"innodb_buffer_pool_size": "1G"}
		}, KindSpec},
		{"too many connections", func(s *Spec) { s.MaxConnections = 1 << 20 }, KindSpec},
		{"sqlite with memory", func(s *Spec) { s.Engine, s.Memory = SQLite, 64<<20 }, KindOther},
		{"sqlite with cpus", func(s *Spec) { s.Engine, s.CPUs = SQLite, "0" }, KindSpec},
		{"sqlite with io_limit", func(s *Spec) { s.Engine, s.IOLimit.ReadIOPS = SQLite, 10 }, KindSpec},
		{"port", func(s *Spec) { s.Port = 15432 }, KindOther},
		{"negative port", func(s *Spec) { s.Port = -1 }, KindSpec},
		{"port beyond 65535", func(s *Spec) { s.Port = 70000 }, KindSpec},
		{"sqlite with port", func(s *Spec) { s.Engine, s.Port = SQLite, 15432 }, KindSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			err := s.Validate(host)
			if tt.want == KindOther {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got valid, want a %s error", tt.want)
			}
			if got := KindOf(err); got != tt.want {
				t.Errorf("kind: got %s, want %s (%v)", got, tt.want, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestKindOf(t *testing.T) {
	err := fmt.Errorf("start: %w", errorf(KindDevice, "no device"))
	if got := KindOf(err); got != KindDevice {
		t.Errorf("got %s, want device", got)
	}
	if got := KindOf(errors.New("x")); got != KindOther {
		t.Errorf("got %s, want other", got)
	}
}

func TestEngineEmbedded(t *testing.T) {
	for _, tc := range []struct {
		e    Engine
		want bool
	}{{Postgres, false}, {MariaDB, false}, {SQLite, true}, {"oracle", false}} {
		if got := tc.e.Embedded(); got != tc.want {
			t.Errorf("Engine(%q).Embedded() = %v, want %v", tc.e, got, tc.want)
		}
	}
}

// TestPortTaken: a port another process listens on is refused, before
// anything starts (Check, as a plan's --dry-run; Start, as instance
// start), with a spec error that names it; a free port passes.
func TestPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := filepath.Join(t.TempDir(), "data")
	s := Spec{Engine: Postgres, DataDir: dir, Port: port}
	for name, f := range map[string]func() error{
		"Check": func() error { return Check(s) },
		"Start": func() error {
			inst, err := Start(context.Background(), s, nil)
			if err == nil {
				inst.Stop(context.Background())
			}
			return err
		},
	} {
		err := f()
		if KindOf(err) != KindSpec || !strings.Contains(fmt.Sprint(err), fmt.Sprintf("port %d is taken", port)) {
			t.Errorf("%s: got %v, want a spec error saying port %d is taken", name, err, port)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data directory: %v, want it never created", err)
	}
	if err := checkPort(Spec{Engine: Postgres, DataDir: dir}); err != nil {
		t.Errorf("no port: %v", err)
	}
}

func TestStateDir(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/st", "HOME": "/home/u"}, "/st/oltplab"},
		{"relative XDG_STATE_HOME ignored", map[string]string{"XDG_STATE_HOME": "st", "HOME": "/home/u"}, "/home/u/.local/state/oltplab"},
		{"HOME", map[string]string{"HOME": "/home/u", "OLTPLAB_RESULTS": "results.db"}, "/home/u/.local/state/oltplab"},
	} {
		if got, err := StateDir(env(c.env)); err != nil || got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.name, got, err, c.want)
		}
	}
}
