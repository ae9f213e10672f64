package latency

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Kind is a kind of operation the layer delays and measures.
type Kind int

const (
	// Read is a READ request: what the server reads past its own page
	// cache (the mount's), one request per I/O of up to 128 KiB.
	Read Kind = iota
	// Write is a WRITE request: a direct write, or the kernel writing the
	// server's dirty pages back (at fsync, or in the background).
	Write
	// Fsync is an FSYNC or FSYNCDIR request: fsync and fdatasync of a file
	// or a directory, after the dirty pages it waits for were written.
	Fsync
	// Meta are the requests that change names and attributes: create,
	// mkdir, unlink, rmdir, rename, link, symlink, setattr (truncate,
	// chmod, times) and fallocate. Lookups, getattr, open and readdir are
	// not delayed: a file system answers them from its caches.
	Meta
	NumKinds
)

var kindNames = [NumKinds]string{"read", "write", "fsync", "meta"}

func (k Kind) String() string {
	if k < 0 || k >= NumKinds {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// Kinds are every kind, in order.
func Kinds() []Kind { return []Kind{Read, Write, Fsync, Meta} }

// Shape names a distribution of delays.
type Shape string

const (
	Fixed Shape = "fixed" // every operation waits Center
	// Normal has mean Center and 99th percentile P99, truncated at 0 (a
	// negative draw is drawn again): with a P99 more than about twice
	// the mean, the truncation moves the mean and median up.
	Normal    Shape = "normal"
	LogNormal Shape = "lognormal" // median Center, 99th percentile P99
)

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// MaxDelay bounds every duration a setting names: one I/O held longer
// would stall the server's own timeouts, not emulate a device.
const MaxDelay = 10 * time.Second

// Jitter is a uniform random amount added to each delay: up to Abs
// either way, or up to Pct percent of the delay drawn. The zero value
// is none.
type Jitter struct {
	Abs time.Duration
	Pct float64
}

// IsZero reports whether the jitter is none.
func (j Jitter) IsZero() bool { return j.Abs == 0 && j.Pct == 0 }

func (j Jitter) String() string {
	if j.Pct > 0 {
		return formatFloat(j.Pct) + "%"
	}
	return formatDuration(j.Abs)
}

// Delay is how one kind of operation is delayed: a distribution, an
// optional tail (TailPct percent of the operations wait Tail instead)
// and an optional jitter of its own.
type Delay struct {
	Shape  Shape
	Center time.Duration // Fixed: the delay; Normal: the mean; LogNormal: the median
	P99    time.Duration // Normal, LogNormal
	// TailPct percent (0 < TailPct < 100) of the operations wait Tail
	// instead of a delay drawn from the distribution: "1% at 50ms".
	TailPct float64
	Tail    time.Duration
	// Jitter, when set, replaces the settings' jitter for this kind.
	Jitter Jitter
}

// IsZero reports whether the delay is none (a zero fixed delay).
func (d Delay) IsZero() bool {
	return (d.Shape == "" || d.Shape == Fixed) && d.Center == 0 && d.TailPct == 0 && d.Jitter.IsZero()
}

// Mean is the delay's expected value (jitter is symmetric; the
// truncation of a normal distribution at 0 is ignored).
func (d Delay) Mean() time.Duration {
	var base float64
	switch d.Shape {
	case Normal:
		base = float64(d.Center)
	case LogNormal:
		sigma := math.Log(float64(d.P99)/float64(d.Center)) / z99
		base = float64(d.Center) * math.Exp(sigma*sigma/2)
	default:
		base = float64(d.Center)
	}
	p := d.TailPct / 100
	return time.Duration((1-p)*base + p*float64(d.Tail))
}

// String is the delay in the form ParseDelay reads.
func (d Delay) String() string {
	var b strings.Builder
	switch d.Shape {
	case Normal, LogNormal:
		fmt.Fprintf(&b, "%s %s p99 %s", d.Shape, formatDuration(d.Center), formatDuration(d.P99))
	default:
		b.WriteString(formatDuration(d.Center))
	}
	if d.TailPct > 0 {
		fmt.Fprintf(&b, " with %s%% at %s", formatFloat(d.TailPct), formatDuration(d.Tail))
	}
	if !d.Jitter.IsZero() {
		b.WriteString(" jitter " + d.Jitter.String())
	}
	return b.String()
}

// Dirs says which of an instance's directories sit on the layer.
type Dirs string

const (
	AllDirs Dirs = ""     // data_dir and wal_dir (the default)
	DataDir Dirs = "data" // data_dir only
	WALDir  Dirs = "wal"  // wal_dir only
)

// Covers reports whether the directory of the given role ("data",
// "wal") sits on the layer.
func (d Dirs) Covers(role string) bool { return d == AllDirs || string(d) == role }

// Settings are a layer's delays by kind of operation, a jitter for
// every kind without one of its own, and the directories it covers.
// The zero value delays nothing: a layer with zero delays, the fair
// baseline for tiers that differ only in their delays.
//
// Its text form (Parse, String) is what `instance start --latency`
// takes: "read=4ms,write=1ms,fsync=6ms", a kind's delay being one of
//
//	4ms                          fixed
//	normal 4ms p99 10ms          normal: mean 4ms, 99th percentile 10ms
//	lognormal 4ms p99 20ms       log-normal: median 4ms, 99th percentile 20ms
//
// optionally followed by "with 1% at 50ms" (a tail: 1% of the
// operations wait 50ms instead) and "jitter 0.5ms" or "jitter 10%"; and
// "jitter=0.5ms" for every kind, "on=data" or "on=wal" for one directory
// only. "0" is a layer with zero delays.
type Settings struct {
	Delays [NumKinds]Delay
	Jitter Jitter
	On     Dirs
}

// Delay is the delay of kind k, the settings' jitter applied when it
// has a delay and no jitter of its own (a kind without a delay stays
// without one).
func (s Settings) Delay(k Kind) Delay {
	d := s.Delays[k]
	if d.Shape == "" {
		d.Shape = Fixed
	}
	if d.Jitter.IsZero() && !d.IsZero() {
		d.Jitter = s.Jitter
	}
	return d
}

// IsZero reports whether nothing is delayed.
func (s Settings) IsZero() bool {
	for _, d := range s.Delays {
		if !d.IsZero() {
			return false
		}
	}
	return s.Jitter.IsZero()
}

// String is the settings in the form Parse reads; "0" for zero delays.
func (s Settings) String() string {
	var parts []string
	for _, k := range Kinds() {
		if d := s.Delays[k]; !d.IsZero() {
			parts = append(parts, k.String()+"="+d.String())
		}
	}
	if !s.Jitter.IsZero() {
		parts = append(parts, "jitter="+s.Jitter.String())
	}
	if s.On != AllDirs {
		parts = append(parts, "on="+string(s.On))
	}
	if len(parts) == 0 {
		return "0"
	}
	if len(parts) == 1 && s.On != AllDirs {
		return "0," + parts[0]
	}
	return strings.Join(parts, ",")
}

// Parse reads settings in their text form (see Settings). Errors are one
// line naming the part that is wrong.
func Parse(text string) (Settings, error) {
	var s Settings
	t := strings.TrimSpace(text)
	if t == "" {
		return s, errors.New(`latency: empty: want e.g. "read=4ms,write=1ms,fsync=6ms", or "0" for the layer with zero delays`)
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(t, ",") {
		item = strings.TrimSpace(item)
		if item == "0" || strings.EqualFold(item, "zero") {
			if seen["0"] {
				return s, errors.New(`latency: "0" given twice`)
			}
			seen["0"] = true
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return s, fmt.Errorf("latency %q: want KIND=DELAY (read, write, fsync, meta), jitter=J or on=data|wal", item)
		}
		key = strings.ToLower(strings.TrimSpace(key))
		if seen[key] {
			return s, fmt.Errorf("latency: %s given twice", key)
		}
		seen[key] = true
		if err := s.set(key, strings.TrimSpace(val)); err != nil {
			return s, err
		}
	}
	if seen["0"] && !s.IsZero() {
		return s, errors.New(`latency: "0" (zero delays) with delays given: give one or the other`)
	}
	return s, s.Validate()
}

// FromMap reads settings given as a mapping of the same keys ("read":
// "4ms", "jitter": "0.5ms", "on": "wal"): a plan's latency section.
func FromMap(m map[string]string) (Settings, error) {
	var s Settings
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := s.set(strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(m[k])); err != nil {
			return s, err
		}
	}
	return s, s.Validate()
}

// set sets one key of the settings.
func (s *Settings) set(key, val string) error {
	switch key {
	case "jitter":
		j, err := parseJitter(val)
		if err != nil {
			return fmt.Errorf("latency jitter=%s: %v", val, err)
		}
		s.Jitter = j
		return nil
	case "on":
		switch strings.ToLower(val) {
		case "data", "data_dir":
			s.On = DataDir
		case "wal", "wal_dir":
			s.On = WALDir
		case "all", "both", "data+wal":
			s.On = AllDirs
		default:
			return fmt.Errorf("latency on=%s: want data, wal or all", val)
		}
		return nil
	}
	for _, k := range Kinds() {
		if key == k.String() {
			d, err := ParseDelay(val)
			if err != nil {
				return fmt.Errorf("latency %s=%s: %v", key, val, err)
			}
			s.Delays[k] = d
			return nil
		}
	}
	return fmt.Errorf("latency: unknown key %q: want read, write, fsync, meta, jitter or on", key)
}

// ParseDelay reads one kind's delay (see Settings).
func ParseDelay(text string) (Delay, error) {
	var d Delay
	f := strings.Fields(text)
	if len(f) == 0 {
		return d, errors.New("empty: want a duration such as 4ms")
	}
	// The distribution.
	switch strings.ToLower(f[0]) {
	case "normal", "lognormal", "log-normal":
		d.Shape = Normal
		what := "mean"
		if strings.ToLower(f[0]) != "normal" {
			d.Shape, what = LogNormal, "median"
		}
		if len(f) < 4 || strings.ToLower(f[2]) != "p99" {
			return d, fmt.Errorf("want %s %s p99 P99, e.g. %s 4ms p99 20ms", f[0], strings.ToUpper(what), d.Shape)
		}
		var err error
		if d.Center, err = parseDuration(f[1]); err != nil {
			return d, fmt.Errorf("%s: %v", what, err)
		}
		if d.P99, err = parseDuration(f[3]); err != nil {
			return d, fmt.Errorf("p99: %v", err)
		}
		f = f[4:]
	case "fixed":
		if len(f) < 2 {
			return d, errors.New("want fixed DURATION, e.g. fixed 4ms")
		}
		f = f[1:]
		fallthrough
	default:
		d.Shape = Fixed
		var err error
		if d.Center, err = parseDuration(f[0]); err != nil {
			return d, err
		}
		f = f[1:]
	}
	// Its tail and jitter.
	for len(f) > 0 {
		switch strings.ToLower(f[0]) {
		case "with":
			if len(f) < 4 || strings.ToLower(f[2]) != "at" {
				return d, errors.New(`want "with P% at DURATION", e.g. with 1% at 50ms`)
			}
			p, err := parsePercent(f[1])
			if err != nil {
				return d, fmt.Errorf("tail %s: %v", f[1], err)
			}
			if p <= 0 || p >= 100 {
				return d, fmt.Errorf("tail %s: want more than 0%% and less than 100%%", f[1])
			}
			d.TailPct = p
			if d.Tail, err = parseDuration(f[3]); err != nil {
				return d, fmt.Errorf("tail: %v", err)
			}
			f = f[4:]
		case "jitter":
			if len(f) < 2 {
				return d, errors.New("want jitter DURATION or jitter P%")
			}
			j, err := parseJitter(f[1])
			if err != nil {
				return d, fmt.Errorf("jitter %s: %v", f[1], err)
			}
			d.Jitter = j
			f = f[2:]
		default:
			return d, fmt.Errorf(`unexpected %q: after the delay comes "with P%% at DURATION" or "jitter J"`, f[0])
		}
	}
	return d, d.validate()
}

// Validate checks the settings: every delay within MaxDelay, a
// distribution's 99th percentile above its center.
func (s Settings) Validate() error {
	for _, k := range Kinds() {
		if err := s.Delays[k].validate(); err != nil {
			return fmt.Errorf("latency %s=%s: %v", k, s.Delays[k], err)
		}
	}
	if err := s.Jitter.validate(); err != nil {
		return fmt.Errorf("latency jitter=%s: %v", s.Jitter, err)
	}
	switch s.On {
	case AllDirs, DataDir, WALDir:
	default:
		return fmt.Errorf("latency on=%s: want data, wal or all", s.On)
	}
	return nil
}

func (d Delay) validate() error {
	for _, v := range []time.Duration{d.Center, d.P99, d.Tail} {
		if v < 0 {
			return errors.New("a delay must not be negative")
		}
		if v > MaxDelay {
			return fmt.Errorf("%s is more than %s per operation", v, MaxDelay)
		}
	}
	switch d.Shape {
	case "", Fixed:
		if d.P99 != 0 {
			return errors.New("a fixed delay has no p99")
		}
	case Normal:
		if d.P99 <= d.Center {
			return fmt.Errorf("p99 %s must exceed the mean %s", d.P99, d.Center)
		}
	case LogNormal:
		if d.Center <= 0 {
			return errors.New("a log-normal delay needs a median above 0")
		}
		if d.P99 <= d.Center {
			return fmt.Errorf("p99 %s must exceed the median %s", d.P99, d.Center)
		}
	default:
		return fmt.Errorf("unknown distribution %q: want fixed, normal or lognormal", d.Shape)
	}
	if d.TailPct < 0 || d.TailPct >= 100 || (d.TailPct > 0 && d.Tail == 0) || (d.TailPct == 0 && d.Tail != 0) {
		return errors.New(`a tail is "with P% at DURATION", P between 0% and 100%`)
	}
	return d.Jitter.validate()
}

func (j Jitter) validate() error {
	if j.Abs < 0 || j.Pct < 0 {
		return errors.New("jitter must not be negative")
	}
	if j.Abs > MaxDelay {
		return fmt.Errorf("%s is more than %s", j.Abs, MaxDelay)
	}
	if j.Pct > 100 {
		return errors.New("jitter above 100% would make delays negative")
	}
	if j.Abs > 0 && j.Pct > 0 {
		return errors.New("jitter is a duration or a percentage, not both")
	}
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 4ms, 0.5ms or 250us", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: a delay must not be negative", s)
	}
	if d > MaxDelay {
		return 0, fmt.Errorf("%s is more than %s per operation", d, MaxDelay)
	}
	return d, nil
}

func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("want a percentage such as 1%%")
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0, fmt.Errorf("want a percentage such as 1%%")
	}
	return p, nil
}

func parseJitter(s string) (Jitter, error) {
	if strings.HasSuffix(s, "%") {
		p, err := parsePercent(s)
		if err != nil {
			return Jitter{}, err
		}
		j := Jitter{Pct: p}
		return j, j.validate()
	}
	d, err := parseDuration(s)
	if err != nil {
		return Jitter{}, err
	}
	return Jitter{Abs: d}, nil
}

func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Settings) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText implements encoding.TextMarshaler with String.
func (s Settings) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalYAML reads either form: the text ("read=4ms,fsync=6ms", "0")
// or a mapping ({read: 4ms, fsync: lognormal 6ms p99 30ms, jitter: 10%}),
// each key once. Its errors are one line, without the node's line (the
// caller, internal/yamldoc, places them).
func (s *Settings) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return s.UnmarshalText([]byte(n.Value))
	case yaml.MappingNode:
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("latency %s: want a single value such as 4ms or \"lognormal 4ms p99 20ms\"", k.Value)
			}
			key := strings.ToLower(strings.TrimSpace(k.Value))
			if _, dup := m[key]; dup {
				return fmt.Errorf("latency: %s given twice", key)
			}
			m[key] = v.Value
		}
		v, err := FromMap(m)
		if err != nil {
			return err
		}
		*s = v
		return nil
	}
	return errors.New("latency: want a mapping such as {read: 4ms, fsync: 6ms} or text such as read=4ms,fsync=6ms")
}

// settingsJSON is the settings as they are recorded: each kind's delay
// in its text form, with its mean.
type settingsJSON struct {
	Text   string               `json:"text"`
	Delays map[string]delayJSON `json:"delays,omitempty"`
	Jitter string               `json:"jitter,omitempty"`
	On     string               `json:"on,omitempty"`
}

type delayJSON struct {
	Delay      string  `json:"delay"`
	MeanMillis float64 `json:"mean_ms"`
}

// MarshalJSON records the settings with each kind's delay and its mean.
func (s Settings) MarshalJSON() ([]byte, error) {
	j := settingsJSON{Text: s.String(), On: string(s.On), Delays: map[string]delayJSON{}}
	if !s.Jitter.IsZero() {
		j.Jitter = s.Jitter.String()
	}
	for _, k := range Kinds() {
		d := s.Delay(k)
		j.Delays[k.String()] = delayJSON{Delay: d.String(), MeanMillis: millis(d.Mean())}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote (its text).
func (s *Settings) UnmarshalJSON(b []byte) error {
	var j settingsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	return s.UnmarshalText([]byte(j.Text))
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
