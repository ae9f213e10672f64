package latency

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParse(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in   string
		want Settings
		text string // String(); "" means in
	}{
		{"read=4ms,write=1ms,fsync=6ms", Settings{Delays: [NumKinds]Delay{
			Read: {Shape: Fixed, Center: 4 * ms}, Write: {Shape: Fixed, Center: ms}, Fsync: {Shape: Fixed, Center: 6 * ms}}}, ""},
		{"0", Settings{}, ""},
		{"zero", Settings{}, "0"},
		{"0,on=wal", Settings{On: WALDir}, ""},
		{" fsync = lognormal 6ms p99 30ms , jitter=10%", Settings{Delays: [NumKinds]Delay{
			Fsync: {Shape: LogNormal, Center: 6 * ms, P99: 30 * ms}}, Jitter: Jitter{Pct: 10}},
			"fsync=lognormal 6ms p99 30ms,jitter=10%"},
		{"read=normal 4ms p99 10ms with 1% at 50ms jitter 0.5ms,on=data", Settings{Delays: [NumKinds]Delay{
			Read: {Shape: Normal, Center: 4 * ms, P99: 10 * ms, TailPct: 1, Tail: 50 * ms, Jitter: Jitter{Abs: ms / 2}}}, On: DataDir},
			"read=normal 4ms p99 10ms with 1% at 50ms jitter 500µs,on=data"},
		{"meta=fixed 250us", Settings{Delays: [NumKinds]Delay{Meta: {Shape: Fixed, Center: 250 * time.Microsecond}}}, "meta=250µs"},
		{"read=0.1ms with 0.5% at 20ms", Settings{Delays: [NumKinds]Delay{
			Read: {Shape: Fixed, Center: 100 * time.Microsecond, TailPct: 0.5, Tail: 20 * ms}}}, "read=100µs with 0.5% at 20ms"},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := Parse(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			text := c.text
			if text == "" {
				text = c.in
			}
			if got.String() != text {
				t.Errorf("String: got %q, want %q", got.String(), text)
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Errorf("String does not parse back: %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"read", "want KIND=DELAY"},
		{"reads=4ms", `unknown key "reads"`},
		{"read=4ms,read=5ms", "read given twice"},
		{"read=4", "not a duration"},
		{"read=-4ms", "negative"},
		{"read=11s", "more than 10s"},
		{"read=normal 4ms", "want normal MEAN p99 P99"},
		{"read=normal 4ms p99 3ms", "must exceed the mean"},
		{"read=lognormal 0 p99 3ms", "median above 0"},
		{"read=4ms with 1% 50ms", "with P% at DURATION"},
		{"read=4ms with 100% at 50ms", "less than 100%"},
		{"read=4ms with 1 at 50ms", "percentage"},
		{"read=4ms extra", `unexpected "extra"`},
		{"jitter=200%", "above 100%"},
		{"on=log", "want data, wal or all"},
		{"0,read=4ms", "one or the other"},
	} {
		t.Run(c.in, func(t *testing.T) {
			_, err := Parse(c.in)
			if err == nil {
				t.Fatalf("Parse(%q) accepted", c.in)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %q, want it to say %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestSettingsYAMLAndJSON(t *testing.T) {
	want, _ := Parse("read=4ms,fsync=lognormal 6ms p99 30ms,jitter=0.5ms,on=wal")
	for name, src := range map[string]string{
		"mapping": "latency: {read: 4ms, fsync: lognormal 6ms p99 30ms, jitter: 0.5ms, on: wal}\n",
		"text":    "latency: read=4ms,fsync=lognormal 6ms p99 30ms,jitter=0.5ms,on=wal\n",
	} {
		t.Run(name, func(t *testing.T) {
			var v struct {
				Latency *Settings `yaml:"latency"`
			}
			if err := yaml.Unmarshal([]byte(src), &v); err != nil {
				t.Fatal(err)
			}
			if v.Latency == nil || *v.Latency != want {
				t.Errorf("got %+v, want %+v", v.Latency, want)
			}
		})
	}
	var v struct {
		Latency *Settings `yaml:"latency"`
	}
	if err := yaml.Unmarshal([]byte("latency: {read: 4ms, wrote: 1ms}\n"), &v); err == nil || !strings.Contains(err.Error(), `unknown key "wrote"`) {
		t.Errorf("a misspelt key: %v", err)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	// A log-normal's mean is above its median: exp(σ²/2) times it.
	if !strings.Contains(string(b), `"mean_ms":7.62`) {
		t.Errorf("JSON lacks the log-normal's mean: %s", b)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil || back != want {
		t.Errorf("JSON round trip: %+v, %v", back, err)
	}
}

// TestDraw: the delays drawn follow what the settings name, from a fixed
// seed (the draws are reproducible, so this is no timing test).
func TestDraw(t *testing.T) {
	ms := float64(time.Millisecond)
	quantile := func(v []float64, q float64) float64 { return v[int(q*float64(len(v)-1))] }
	draws := func(d Delay) []float64 {
		r := rand.New(rand.NewPCG(1, 2))
		v := make([]float64, 200_000)
		for i := range v {
			v[i] = float64(d.draw(r))
		}
		slices.Sort(v)
		return v
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if got < want*0.97 || got > want*1.03 {
			t.Errorf("%s: %.3f ms, want %.3f ms within 3%%", name, got/ms, want/ms)
		}
	}
	d, _ := ParseDelay("lognormal 4ms p99 20ms")
	v := draws(d)
	near("log-normal median", quantile(v, 0.5), 4*ms)
	near("log-normal p99", quantile(v, 0.99), 20*ms)
	d, _ = ParseDelay("normal 4ms p99 6ms")
	v = draws(d)
	near("normal median", quantile(v, 0.5), 4*ms)
	near("normal p99", quantile(v, 0.99), 6*ms)
	if v[0] < 0 {
		t.Errorf("normal drew a negative delay: %v", v[0])
	}
	d, _ = ParseDelay("1ms with 2% at 50ms")
	v = draws(d)
	if quantile(v, 0.97) != 1*ms || quantile(v, 0.99) != 50*ms {
		t.Errorf("tail: p97 %.3f ms, p99 %.3f ms; want 1 and 50", quantile(v, 0.97)/ms, quantile(v, 0.99)/ms)
	}
	d, _ = ParseDelay("4ms jitter 1ms")
	v = draws(d)
	if v[0] < 3*ms || v[len(v)-1] > 5*ms {
		t.Errorf("jitter: %.3f to %.3f ms, want within 3 to 5", v[0]/ms, v[len(v)-1]/ms)
	}
	near("jitter's median", quantile(v, 0.5), 4*ms)
	s, _ := Parse("read=4ms,jitter=25%")
	if j := s.Delay(Read).Jitter; j.Pct != 25 {
		t.Errorf("the settings' jitter does not reach a kind without one: %+v", j)
	}
	if m := s.Delay(Write); !m.IsZero() {
		t.Errorf("write has no delay, got %v", m)
	}
}

func TestWindow(t *testing.T) {
	r := newRecorder()
	for range 10 {
		r.record(Read, 5*time.Millisecond, 4*time.Millisecond, false)
	}
	a := Snapshot{At: time.Unix(100, 0), CPUSeconds: 1, Mounts: map[string]*MountFigures{"data": r.snapshot()}}
	for range 30 {
		r.record(Read, 9*time.Millisecond, 8*time.Millisecond, false)
	}
	r.record(Fsync, 2*time.Millisecond, 0, true)
	b := Snapshot{At: time.Unix(110, 0), CPUSeconds: 1.5, Mounts: map[string]*MountFigures{"data": r.snapshot()}}
	w, err := b.Since(a)
	if err != nil {
		t.Fatal(err)
	}
	s := w.Summary()
	read := s.All["read"]
	if read.Count != 30 || read.P50Millis < 8.99 || read.P50Millis > 9.01 || read.DelayMeanMillis != 8 {
		t.Errorf("read over the window: %+v", read)
	}
	if got := s.ByDir["data"]["fsync"]; got.Count != 1 || got.Errors != 1 {
		t.Errorf("fsync over the window: %+v", got)
	}
	if s.Seconds != 10 || s.CPUSeconds != 0.5 || s.CPUMicrosPerOp < 16129 || s.CPUMicrosPerOp > 16130 {
		t.Errorf("window: %+v", s)
	}
	if _, err := a.Since(b); err == nil {
		t.Error("an earlier snapshot less a later one gave a window")
	}
}
