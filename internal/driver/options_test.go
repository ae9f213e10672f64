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
		{"no reconnection", func(o *Options) { o.ReconnectFor = 0 }, false},
		{"negative reconnect-for", func(o *Options) { o.ReconnectFor = -time.Second }, true},
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
	o := Options{VUs: 3, Rampup: 90 * time.Second, Duration: 5 * time.Minute, Grace: 2500 * time.Millisecond,
		Seed: 99, AllWarehouses: true, Style: dialect.StyleClientSQL, MaxRetries: 4, LiveEvery: 10 * time.Second}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	const want = `{"vus":3,"rampup_seconds":90,"duration_seconds":300,"grace_seconds":2.5,"seed":99,"all_warehouses":true,"style":"client-sql","max_retries":4,"live_every_seconds":10}`
	if string(b) != want {
		t.Errorf("JSON:\n got  %s\n want %s", b, want)
	}
	var back Options
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if back != o {
		t.Errorf("round trip: got %+v, want %+v", back, o)
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
