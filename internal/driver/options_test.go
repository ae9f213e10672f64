package driver

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
)

func TestOptionsValidate(t *testing.T) {
	ok := Defaults()
	for _, c := range []struct {
		name    string
		edit    func(*Options)
		wantErr bool
	}{
		{"defaults", func(*Options) {}, false},
		{"no ramp-up, no grace, no retries", func(o *Options) { o.Rampup, o.Grace, o.MaxRetries = 0, 0, 0 }, false},
		{"client sql", func(o *Options) { o.Style = dialect.StyleClientSQL }, false},
		{"zero VUs", func(o *Options) { o.VUs = 0 }, true},
		{"negative ramp-up", func(o *Options) { o.Rampup = -time.Second }, true},
		{"duration under a second", func(o *Options) { o.Duration = 500 * time.Millisecond }, true},
		{"negative grace", func(o *Options) { o.Grace = -1 }, true},
		{"negative retries", func(o *Options) { o.MaxRetries = -1 }, true},
		{"zero live interval", func(o *Options) { o.LiveEvery = 0 }, true},
		{"unknown style", func(o *Options) { o.Style = 7 }, true},
		{"rate", func(o *Options) { o.Rate = 12.5 }, false},
		{"negative rate", func(o *Options) { o.Rate = -1 }, true},
		{"rate 1e300", func(o *Options) { o.Rate = 1e300 }, true},
		{"rate above MaxRate", func(o *Options) { o.Rate = MaxRate + 1 }, true},
		{"rate MaxRate", func(o *Options) { o.Rate = MaxRate }, false},
		{"infinite rate", func(o *Options) { o.Rate = math.Inf(1) }, true},
		{"terminals in tproc-c", func(o *Options) { o.Terminals = 10 }, true},
		{"sessions in tproc-c", func(o *Options) { o.Sessions = 4 }, true},
		{"tpc-c, defaults", func(o *Options) { o.Mode = ModeTPCC }, false},
		{"tpc-c without virtual users", func(o *Options) { o.Mode, o.VUs = ModeTPCC, 0 }, false},
		{"tpc-c, terminals and pool", func(o *Options) { o.Mode, o.Terminals, o.Sessions, o.DeliverySessions = ModeTPCC, 1000, 32, 2 }, false},
		{"tpc-c, negative terminals", func(o *Options) { o.Mode, o.Terminals = ModeTPCC, -1 }, true},
		{"tpc-c, negative sessions", func(o *Options) { o.Mode, o.Sessions = ModeTPCC, -1 }, true},
		{"tpc-c at a rate", func(o *Options) { o.Mode, o.Rate = ModeTPCC, 10 }, true},
		{"tpc-c over all warehouses", func(o *Options) { o.Mode, o.AllWarehouses = ModeTPCC, true }, true},
		{"unknown mode", func(o *Options) { o.Mode = 5 }, true},
		{"no reconnection", func(o *Options) { o.ReconnectFor = 0 }, false},
		{"negative reconnect-for", func(o *Options) { o.ReconnectFor = -time.Second }, true},
		{"no answer timeout", func(o *Options) { o.AnswerTimeout = 0 }, false},
		{"negative answer-timeout", func(o *Options) { o.AnswerTimeout = -time.Second }, true},
		{"no failure allowed", func(o *Options) { o.MaxFailurePct = 0 }, false},
		{"failure rate above 100", func(o *Options) { o.MaxFailurePct = 101 }, true},
		{"failure rate negative", func(o *Options) { o.MaxFailurePct = -1 }, true},
		{"failure rate NaN", func(o *Options) { o.MaxFailurePct = math.NaN() }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			err := o.Validate()
			if got := err != nil; got != c.wantErr {
				t.Errorf("Validate() = %v, want error: %v", err, c.wantErr)
			}
		})
	}
}

func TestOptionsJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{
			name: "tproc-c",
			o: Options{VUs: 3, Rampup: 90 * time.Second, Duration: 5 * time.Minute, Grace: 2500 * time.Millisecond,
				Seed: 99, AllWarehouses: true, Style: dialect.StyleClientSQL, MaxRetries: 4, LiveEvery: 10 * time.Second},
			want: `{"mode":"tproc-c","vus":3,"rampup_seconds":90,"duration_seconds":300,"grace_seconds":2.5,"seed":99,"all_warehouses":true,"style":"client-sql","max_retries":4,"live_every_seconds":10,"max_stall_pct":0}`,
		},
		{
			name: "tproc-c at a rate",
			o:    Options{VUs: 8, Rate: 12.5, Duration: time.Minute, Seed: 1, LiveEvery: time.Second},
			want: `{"mode":"tproc-c","vus":8,"rate_per_vu":12.5,"rampup_seconds":0,"duration_seconds":60,"grace_seconds":0,"seed":1,"all_warehouses":false,"style":"procedures","max_retries":0,"live_every_seconds":1,"max_stall_pct":0}`,
		},
		{
			name: "tpc-c",
			o:    Options{Mode: ModeTPCC, Terminals: 1000, Sessions: 64, DeliverySessions: 1, Duration: 10 * time.Minute, Seed: 2, LiveEvery: time.Second},
			want: `{"mode":"tpc-c","vus":0,"terminals":1000,"sessions":64,"delivery_sessions":1,"rampup_seconds":0,"duration_seconds":600,"grace_seconds":0,"seed":2,"all_warehouses":false,"style":"procedures","max_retries":0,"live_every_seconds":1,"max_stall_pct":0}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.o)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if string(b) != c.want {
				t.Errorf("JSON:\n got  %s\n want %s", b, c.want)
			}
			var back Options
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if back != c.o {
				t.Errorf("round trip: got %+v, want %+v", back, c.o)
			}
		})
	}
}

// TestOptionsJSONBeforeModes: options stored before modes existed read as
// the tproc-c mode; an unknown mode is refused.
func TestOptionsJSONBeforeModes(t *testing.T) {
	var o Options
	if err := json.Unmarshal([]byte(`{"vus":4,"duration_seconds":60,"style":"procedures"}`), &o); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if o.Mode != ModeTPROCC || o.VUs != 4 {
		t.Errorf("got mode %v with %d virtual users, want tproc-c with 4", o.Mode, o.VUs)
	}
	if err := json.Unmarshal([]byte(`{"mode":"tpc-e"}`), &o); err == nil {
		t.Errorf("unmarshal of mode tpc-e: got nil error")
	}
}

func TestModeText(t *testing.T) {
	for _, m := range []Mode{ModeTPROCC, ModeTPCC} {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatalf("marshal %v: %v", m, err)
		}
		var back Mode
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("round trip of %q: got %v, %v", b, back, err)
		}
	}
	for _, bad := range []string{"", "TPC-C", "tpcc", "tpc-e"} {
		var m Mode
		if err := m.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q): got nil error", bad)
		}
	}
	if _, err := Mode(7).MarshalText(); err == nil {
		t.Errorf("MarshalText of mode 7: got nil error")
	}
}

func TestForWarehouses(t *testing.T) {
	for _, c := range []struct {
		name       string
		o          Options
		warehouses int
		want       [3]int // terminals, sessions, delivery sessions
	}{
		{"ten per warehouse", Options{Mode: ModeTPCC}, 100, [3]int{1000, DefaultSessionsMax, 1}},
		{"one warehouse: one session per terminal", Options{Mode: ModeTPCC}, 1, [3]int{10, 10, 1}},
		{"10,000 terminals", Options{Mode: ModeTPCC, Terminals: 10000}, 100, [3]int{10000, DefaultSessionsMax, 10}},
		{"1,001 terminals", Options{Mode: ModeTPCC, Terminals: 1001}, 100, [3]int{1001, DefaultSessionsMax, 2}},
		{"pool cut to the terminals", Options{Mode: ModeTPCC, Terminals: 5, Sessions: 50, DeliverySessions: 3}, 100, [3]int{5, 5, 3}},
		{"tproc-c untouched", Options{VUs: 4}, 100, [3]int{0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.o.ForWarehouses(c.warehouses)
			if g := [3]int{got.Terminals, got.Sessions, got.DeliverySessions}; g != c.want {
				t.Errorf("terminals, sessions, delivery sessions: got %v, want %v", g, c.want)
			}
		})
	}
}

func TestAssignment(t *testing.T) {
	for _, c := range []struct {
		i, vus, w    int
		all          bool
		wantHome     int
		wantDistrict int
		wantList     []int
	}{
		{0, 4, 10, false, 1, 1, nil},
		{3, 4, 10, false, 4, 1, nil},
		{12, 20, 10, false, 3, 2, nil}, // second user of warehouse 3
		{0, 4, 10, true, 1, 1, []int{1, 5, 9}},
		{3, 4, 10, true, 4, 1, []int{4, 8}},
		{1, 3, 3, true, 2, 1, nil},  // VUs >= W: home only
		{5, 10, 4, true, 2, 2, nil}, // VUs > W: home only
		{0, 1, 1, true, 1, 1, nil},  // one warehouse
		{0, 1, 5, true, 1, 1, []int{1, 2, 3, 4, 5}},
	} {
		t.Run(fmt.Sprintf("vu%d/%d,w=%d,all=%v", c.i, c.vus, c.w, c.all), func(t *testing.T) {
			home, district, list := assignment(c.i, c.vus, c.w, c.all)
			if home != c.wantHome || district != c.wantDistrict || !slices.Equal(list, c.wantList) {
				t.Errorf("got home %d district %d list %v, want %d %d %v", home, district, list, c.wantHome, c.wantDistrict, c.wantList)
			}
		})
	}
}

func TestAllWarehousesCoverEveryWarehouseOnce(t *testing.T) {
	for _, c := range []struct{ vus, w int }{{1, 7}, {3, 10}, {4, 4}, {9, 10}} {
		t.Run(fmt.Sprintf("vus=%d,w=%d", c.vus, c.w), func(t *testing.T) {
			seen := map[int]int{}
			for i := range c.vus {
				home, _, list := assignment(i, c.vus, c.w, true)
				if list == nil {
					list = []int{home}
				}
				for _, w := range list {
					seen[w]++
				}
			}
			for w := 1; w <= c.w; w++ {
				if seen[w] != 1 {
					t.Errorf("warehouse %d is driven by %d users, want 1", w, seen[w])
				}
			}
		})
	}
}
