package testenv

import (
	"fmt"
	"testing"
)

// verdictTB records what Require decided instead of ending the test.
type verdictTB struct {
	testing.TB
	got string // "", "skip" or "fail"
	msg string
}

func (v *verdictTB) Helper() {}

func (v *verdictTB) Skipf(format string, args ...any) {
	if v.got == "" {
		v.got, v.msg = "skip", fmt.Sprintf(format, args...)
	}
}

func (v *verdictTB) Fatalf(format string, args ...any) {
	if v.got == "" {
		v.got, v.msg = "fail", fmt.Sprintf(format, args...)
	}
}

// TestRequire: a missing need skips on a developer machine and fails
// under CI or OLTPLAB_REQUIRE_SERVERS=1; a need that is here runs; -short
// skips whatever is needed, even where CI requires everything; an unknown
// need fails.
func TestRequire(t *testing.T) {
	cases := []struct {
		name      string
		ci, req   string // CI, OLTPLAB_REQUIRE_SERVERS
		pg        string // OLTPLAB_TEST_POSTGRES
		need      Need
		want      string
		wantShort string
	}{
		{"missing on a developer machine", "", "", "", Postgres, "skip", "skip"},
		{"missing under CI", "true", "", "", Postgres, "fail", "skip"},
		{"missing under make test", "", "1", "", Postgres, "fail", "skip"},
		{"here", "", "", "postgres://x@127.0.0.1:1/x", Postgres, "", "skip"},
		{"here under CI", "true", "", "postgres://x@127.0.0.1:1/x", Postgres, "", "skip"},
		{"long under CI", "true", "", "", Long, "", "skip"},
		{"subprocess", "", "", "", Subprocess, "", "skip"},
		{"unknown", "", "", "", "postgresql", "fail", "fail"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CI", c.ci)
			t.Setenv("OLTPLAB_REQUIRE_SERVERS", c.req)
			t.Setenv("OLTPLAB_TEST_POSTGRES", c.pg)
			v := &verdictTB{TB: t}
			Require(v, c.need)
			want := c.want
			if testing.Short() {
				want = c.wantShort
			}
			if v.got != want {
				t.Errorf("Require(%q): got %q (%s), want %q", c.need, v.got, v.msg, want)
			}
		})
	}
}

// TestUnavailable: a need a test found missing itself skips or fails as
// Require would, with the reason.
func TestUnavailable(t *testing.T) {
	for _, c := range []struct{ ci, want string }{{"", "skip"}, {"true", "fail"}} {
		t.Setenv("CI", c.ci)
		t.Setenv("OLTPLAB_REQUIRE_SERVERS", "")
		v := &verdictTB{TB: t}
		Unavailable(v, Python, "no venv module")
		if v.got != c.want || v.msg == "" {
			t.Errorf("CI=%q: got %q (%s), want %q with the reason", c.ci, v.got, v.msg, c.want)
		}
	}
}
