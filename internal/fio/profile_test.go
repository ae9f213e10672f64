package fio

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLookupProfiles(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"all", ProfileNames(), ""},
		{"", ProfileNames(), ""},
		{"sql-8k", []string{"sql-8k"}, ""},
		{"seq-read-128k, oltp-4k-qd8,seq-read-128k", []string{"seq-read-128k", "oltp-4k-qd8"}, ""},
		{"oltp-4k", nil, `unknown profile "oltp-4k" (want all or one or more of oltp-4k-qd8, oltp-4k-qd32, sql-8k,`},
		{"sql-8k,", nil, `unknown profile ""`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := LookupProfiles(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error: got %v, want one containing %q", err, c.wantErr)
				}
				if _, ok := err.(*InputError); !ok {
					t.Errorf("error type: got %T, want *InputError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %v, want %v", names, c.want)
			}
		})
	}
}

// TestProfilesAreTheStudies: the table holds the micro-benchmarks of
// METHODOLOGY.md experiment 9 with the fio options that express them.
func TestProfilesAreTheStudies(t *testing.T) {
	want := map[string]string{
		"oltp-4k-qd8":    "rw=randrw bs=4096 rwmixread=70 iodepth=8 numjobs=1 runtime=30",
		"oltp-4k-qd32":   "rw=randrw bs=4096 rwmixread=70 iodepth=32 numjobs=1 runtime=30",
		"sql-8k":         "rw=randrw bs=8192 rwmixread=75 iodepth=4 numjobs=8 runtime=30",
		"rand-64k":       "rw=randrw bs=65536 rwmixread=70 iodepth=8 numjobs=1 runtime=30",
		"seq-read-128k":  "rw=read bs=131072 iodepth=8 numjobs=1 runtime=30",
		"seq-write-128k": "rw=write bs=131072 iodepth=8 numjobs=1 runtime=30",
		"seq-read-256k":  "rw=read bs=262144 iodepth=8 numjobs=1 runtime=30",
		"seq-write-256k": "rw=write bs=262144 iodepth=8 numjobs=1 runtime=30",
	}
	if len(Profiles) != len(want) {
		t.Errorf("profiles: got %d, want %d", len(Profiles), len(want))
	}
	for _, p := range Profiles {
		t.Run(p.Name, func(t *testing.T) {
			var own []string
			for _, o := range p.Options()[len(baseOptions):] {
				own = append(own, o.String())
			}
			if got := strings.Join(own, " "); got != want[p.Name] {
				t.Errorf("options: got %q, want %q", got, want[p.Name])
			}
			base := map[string]string{}
			for _, o := range p.Options()[:len(baseOptions)] {
				base[o.Key] = o.Value
			}
			for k, v := range map[string]string{"ioengine": "libaio", "direct": "1", "time_based": "1", "group_reporting": "1", "thread": "1"} {
				if base[k] != v {
					t.Errorf("base option %s: got %q, want %q", k, base[k], v)
				}
			}
			d := p.Describe()
			if strings.Contains(d, "\n") || !strings.Contains(d, "queue depth") || !strings.Contains(d, "30s") || !strings.Contains(d, p.Emulates) {
				t.Errorf("description %q: want one line with queue depth, runtime and what it emulates", d)
			}
		})
	}
	p, _ := profileByName("sql-8k")
	if got, want := p.Describe(), "8 KiB random 75% read / 25% write, queue depth 4, 8 jobs (32 outstanding), 30s"; !strings.HasPrefix(got, want) {
		t.Errorf("sql-8k: got %q, want it to start with %q", got, want)
	}
}

func TestParseOption(t *testing.T) {
	cases := []struct {
		in      string
		want    Option
		wantErr string
	}{
		{"rwmixread=50", Option{"rwmixread", "50"}, ""},
		{"--ioengine=io_uring", Option{"ioengine", "io_uring"}, ""},
		{"percentile_list=50:99:99.99", Option{"percentile_list", "50:99:99.99"}, ""},
		{"direct=0", Option{"direct", "0"}, ""},
		{"rwmixread", Option{}, "want KEY=VALUE"},
		{"=5", Option{}, "empty key"},
		{"bs=", Option{}, "empty value"},
		{"Bs=4k", Option{}, "not a fio option name"},
		{"b s=4k", Option{}, "not a fio option name"},
		{"bs=4k\n--filename=/etc/passwd", Option{}, "control character"},
		{"filename=/dev/vda", Option{}, "filename is set by oltplab"},
		{"size=1G", Option{}, "use --size"},
		{"runtime=60", Option{}, "use --runtime"},
		{"output-format=normal", Option{}, "set by oltplab"},
		{"thread=0", Option{}, "set by oltplab"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseOption(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("error: got %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %+v, %v, want %+v", got, err, c.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64 // 0: error
	}{
		{"16M", 16 << 20}, {"16MiB", 16 << 20}, {"16m", 16 << 20}, {"1.5G", 3 << 29}, {"2GiB", 2 << 30},
		{"1GB", 1e9}, {"500MB", 500e6}, {"1T", 1 << 40}, {"4096", 4096}, {"4096B", 4096}, {" 8K ", 8 << 10},
		{"", 0}, {"G", 0}, {"-1G", 0}, {"0", 0}, {"12Q", 0}, {"1e3M", 0}, {"lots", 0},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if c.want == 0 {
				if err == nil {
					t.Errorf("got %d, want an error", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %d, %v, want %d", got, err, c.want)
			}
		})
	}
}

func TestDefaultSize(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name                 string
		mem                  int64
		direct, memoryBacked bool
		want                 int64
	}{
		{"direct: memory rounded up to GiB", 24*gib - 300<<20, true, false, 24 * gib},
		{"buffered: twice the memory", 24*gib - 300<<20, false, false, 48 * gib},
		{"tmpfs", 24 * gib, true, true, gib},
		{"memory unknown", 0, true, false, 16 * gib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := DefaultSize(c.mem, c.direct, c.memoryBacked)
			if got != c.want || why == "" {
				t.Errorf("got %s (%q), want %s with a reason", FormatBytes(got), why, FormatBytes(c.want))
			}
		})
	}
}

func TestProfileArgs(t *testing.T) {
	p, _ := profileByName("seq-read-128k")
	p.Runtime = 2 * time.Second
	opts := append(p.Options(), Option{"ioengine", "psync"})
	got := strings.Join(profileArgs(p.Name, "/mnt/a:b/oltplab-fio-1.dat", 16<<20, opts), " ")
	want := `--name=seq-read-128k --filename=/mnt/a\:b/oltplab-fio-1.dat --size=16777216 --output-format=json+ ` +
		"--ioengine=libaio --direct=1 --time_based=1 --group_reporting=1 --thread=1 " +
		"--rw=read --bs=131072 --iodepth=8 --numjobs=1 --runtime=2 --ioengine=psync"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestValidate(t *testing.T) {
	ok := Options{Dir: "/tmp", Profiles: Profiles[:1]}
	cases := []struct {
		name    string
		edit    func(*Options)
		wantErr string
	}{
		{"ok", func(*Options) {}, ""},
		{"no dir", func(o *Options) { o.Dir = "" }, "no directory"},
		{"no profile", func(o *Options) { o.Profiles = nil }, "no profile"},
		{"runtime too short", func(o *Options) { o.Runtime = 500 * time.Millisecond }, "at least 1s"},
		{"runtime not whole seconds", func(o *Options) { o.Runtime = 1500 * time.Millisecond }, "whole seconds"},
		{"size too small", func(o *Options) { o.SizeBytes = 4096 }, "at least 1 MiB"},
		{"reserved extra", func(o *Options) { o.Extra = []Option{{"filename", "/dev/vda"}} }, "set by oltplab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			err := o.Validate()
			if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("got %v, want %q", err, c.wantErr)
			}
		})
	}
}

// TestOptionJSON: stored options read back, also those oltplab sets itself.
func TestOptionJSON(t *testing.T) {
	p, _ := profileByName("sql-8k")
	b, err := json.Marshal(p.Options())
	if err != nil {
		t.Fatal(err)
	}
	var back []Option
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if !slices.Equal(back, p.Options()) {
		t.Errorf("got %v, want %v", back, p.Options())
	}
	if err := json.Unmarshal([]byte(`["no-equals"]`), &back); err == nil {
		t.Error("an option without = read back without error")
	}
}
