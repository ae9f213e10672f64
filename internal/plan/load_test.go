package plan

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/driver"
	"github.com/oltplab/oltplab/internal/yamldoc"
)

// TestLoadFlags: every option of Load is a flag named as its plan field
// (with '-'), bound to it, and omit leaves flags out.
func TestLoadFlags(t *testing.T) {
	var names []string
	for name := range yamldoc.Fields(reflect.TypeFor[Load]()) {
		names = append(names, name)
	}
	slices.Sort(names)
	l := DefaultLoad()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	l.RegisterFlags(fs)
	var flags []string
	fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, strings.ReplaceAll(f.Name, "-", "_")) })
	slices.Sort(flags)
	if !slices.Equal(names, flags) {
		t.Errorf("flags %v, want one per plan field %v", flags, names)
	}
	err := fs.Parse([]string{"--rampup", "1s", "--duration", "2s", "--grace", "3s", "--client-sql", "--all-warehouses",
		"--max-retries", "0", "--reconnect-for", "4s", "--max-failure-rate", "0.5", "--max-stall", "25", "--max-foreign-cpu", "15",
		"--max-steal", "20", "--seed", "9"})
	if err != nil {
		t.Fatal(err)
	}
	want := Load{Rampup: time.Second, Duration: 2 * time.Second, Grace: 3 * time.Second, ClientSQL: true, AllWarehouses: true,
		ReconnectFor: 4 * time.Second, MaxFailureRate: 0.5, MaxStall: 25, MaxForeignCPU: 15, MaxSteal: 20, Seed: 9}
	if l != want {
		t.Errorf("parsed into %+v, want %+v", l, want)
	}

	fs = pflag.NewFlagSet("t", pflag.ContinueOnError)
	l.RegisterFlags(fs, "duration", "seed")
	if fs.Lookup("duration") != nil || fs.Lookup("seed") != nil || fs.Lookup("rampup") == nil {
		t.Errorf("omit duration and seed: got flags duration %v, seed %v, rampup %v", fs.Lookup("duration"), fs.Lookup("seed"), fs.Lookup("rampup"))
	}
}

// TestLoadDriver: Driver carries every option into driver.Options, and
// the defaults are the driver's, with no seed (drawn when the step runs).
func TestLoadDriver(t *testing.T) {
	want := driver.Defaults()
	want.Seed = 0
	if got := DefaultLoad().Driver(); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: got %+v, want %+v", got, want)
	}
	l := Load{Rampup: time.Second, Duration: 2 * time.Second, Grace: 3 * time.Second, ClientSQL: true, AllWarehouses: true,
		MaxRetries: 1, ReconnectFor: 4 * time.Second, MaxFailureRate: 0.5, MaxStall: 25, MaxForeignCPU: 15, MaxSteal: 20, Seed: 9}
	d := l.Driver()
	if d.Rampup != l.Rampup || d.Duration != l.Duration || d.Grace != l.Grace || d.Style != dialect.StyleClientSQL ||
		!d.AllWarehouses || d.MaxRetries != 1 || d.ReconnectFor != l.ReconnectFor || d.MaxFailurePct != 0.5 || d.Seed != 9 ||
		d.MaxStallPct != 25 || d.MaxForeignCPUPct != 15 || d.MaxStealPct != 20 {
		t.Errorf("Driver: got %+v from %+v", d, l)
	}
	// ApplyTo keeps what Load does not hold.
	d = driver.Defaults()
	d.Rate, d.AnswerTimeout = 5, time.Minute
	l.ApplyTo(&d)
	if d.Rate != 5 || d.AnswerTimeout != time.Minute || d.Rampup != time.Second {
		t.Errorf("ApplyTo: got %+v", d)
	}
	if err := l.Validate(0); err == nil || !strings.Contains(err.Error(), "virtual users") {
		t.Errorf("Validate(0 VUs): got %v", err)
	}
	l.Duration = time.Millisecond
	if err := l.Validate(1); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("Validate(1ms duration): got %v", err)
	}
}
