package cli

import (
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzRunFlags: whatever --vus, --rampup, --duration and --grace hold,
// run either refuses them as bad input (exit 2) or accepts a schedule the
// driver can keep: at least one step, durations that are not negative and
// whose sum does not overflow.
func FuzzRunFlags(f *testing.F) {
	f.Add("4", "2m", "5m", "10s")
	f.Add("fib:89", "0s", "1s", "0s")
	f.Add("1,2", "-1s", "1h", "1ms")
	f.Add("4", "2562047h", "2562047h", "2562047h")
	f.Add("4", "9223372036s", "1s", "0")
	f.Fuzz(func(t *testing.T, vus, rampup, duration, grace string) {
		a := &app{stdio: Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, env: Env{}}
		var o runOptions
		fs := newFlagSet("run")
		o.register(fs, a)
		err := a.parseFlags(fs, runSynopsis, []string{"--vus", vus, "--rampup", rampup, "--duration", duration, "--grace", grace})
		if err == nil {
			err = o.validate()
		}
		if err != nil {
			if c := exitCode(err); c != exitUsage {
				t.Errorf("bad input %q %q %q %q: exit %d, want %d (%v)", vus, rampup, duration, grace, c, exitUsage, err)
			}
			return
		}
		d := o.driver
		if len(o.steps) == 0 || d.Rampup < 0 || d.Duration < time.Second || d.Grace < 0 {
			t.Fatalf("accepted %d steps, ramp-up %s, duration %s, grace %s", len(o.steps), d.Rampup, d.Duration, d.Grace)
		}
		if total := d.Rampup + d.Duration + d.Grace; total < d.Duration || total < d.Rampup || total < d.Grace {
			t.Errorf("ramp-up %s + duration %s + grace %s overflows", d.Rampup, d.Duration, d.Grace)
		}
	})
}
