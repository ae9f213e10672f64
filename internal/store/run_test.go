package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func sameRun(t *testing.T, got, want Run) {
	t.Helper()
	if !got.StartedAt.Equal(want.StartedAt) || !got.EndedAt.Equal(want.EndedAt) {
		t.Errorf("times: got %v..%v, want %v..%v", got.StartedAt, got.EndedAt, want.StartedAt, want.EndedAt)
	}
	if (got.Seed == nil) != (want.Seed == nil) || (got.Seed != nil && *got.Seed != *want.Seed) {
		t.Errorf("seed: got %v, want %v", got.Seed, want.Seed)
	}
	for name, pair := range map[string][2]json.RawMessage{
		"params": {got.Params, want.Params}, "context": {got.Context, want.Context}, "summary": {got.Summary, want.Summary},
	} {
		if !bytes.Equal(pair[0], pair[1]) {
			t.Errorf("%s: got %s, want %s", name, pair[0], pair[1])
		}
	}
	got.StartedAt, got.EndedAt, got.Seed, got.Params, got.Context, got.Summary = want.StartedAt, want.EndedAt, want.Seed, nil, nil, nil
	want.Params, want.Context, want.Summary = nil, nil, nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func testRunRoundTrip(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	pid, err := s.CreateProfile(ctx, Profile{Label: "nvme"})
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(0) // zero is a real seed, not "none"
	in := Run{
		Kind: KindRun, Label: "nvme", ProfileID: pid, Step: 3, Repeat: 2, VUs: 5,
		StartedAt: time.Date(2025, 3, 1, 9, 30, 0, 1, time.FixedZone("CET", 3600)),
		Target:    "postgres://bench@db1:5432/tpcc", Dialect: "postgres", ToolVersion: "v0.1.0 (abc123)",
		Seed:   &seed,
		Params: json.RawMessage(`{"warehouses":10,"duration":"5m"}`), Context: json.RawMessage(`{"host":{"cpus":2}}`),
	}
	id, err := s.CreateRun(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ID, want.Status = id, StatusRunning
	got, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Every new run gets its own identity and records this process.
	if len(got.UID) != 32 {
		t.Errorf("UID: got %q, want 32 hex digits", got.UID)
	}
	if me := currentWriter(); got.Writer != me || me.PID != os.Getpid() || me.Started == "" {
		t.Errorf("writer: got %+v, want this process %+v with a start identity", got.Writer, me)
	}
	want.UID, want.Writer = got.UID, got.Writer
	sameRun(t, got, want)

	if err := s.UpdateRunContext(ctx, id, json.RawMessage(`{"host":{"cpus":2},"db":{"version":"15.8"}}`)); err != nil {
		t.Fatal(err)
	}
	summary := json.RawMessage(`{"tpm":1234.5,"nopm":270}`)
	if err := s.FinishRun(ctx, id, StatusPartial, summary, "2 workers lost their connection"); err != nil {
		t.Fatal(err)
	}
	want.Status, want.Summary, want.Error = StatusPartial, summary, "2 workers lost their connection"
	want.Context = json.RawMessage(`{"host":{"cpus":2},"db":{"version":"15.8"}}`)
	got, err = s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.EndedAt.IsZero() {
		t.Fatalf("EndedAt not set after FinishRun")
	}
	want.EndedAt = got.EndedAt
	sameRun(t, got, want)

	t.Run("a bare run stores NULLs and reads back zeros", func(t *testing.T) {
		id, err := s.CreateRun(ctx, Run{Kind: KindMonitor})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.ProfileID != 0 || got.Step != 0 || got.Seed != nil || got.Summary != nil || string(got.Params) != "{}" || got.StartedAt.IsZero() {
			t.Errorf("got %+v, want zero optional fields, {} params and a start time", got)
		}
	})
}

func testRunErrors(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateRun(ctx, Run{Kind: KindBuild})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, id, StatusOK, nil, ""); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
		want error // nil: any error
	}{
		{"finish twice", s.FinishRun(ctx, id, StatusFailed, nil, "late"), ErrFinished},
		{"finish missing run", s.FinishRun(ctx, id+100, StatusOK, nil, ""), ErrNotFound},
		{"finish with running", s.FinishRun(ctx, id, StatusRunning, nil, ""), nil},
		{"finish with invalid summary", s.FinishRun(ctx, id, StatusOK, json.RawMessage(`{`), ""), nil},
		{"get missing run", func() error { _, err := s.GetRun(ctx, id+100); return err }(), ErrNotFound},
		{"update context of missing run", s.UpdateRunContext(ctx, id+100, nil), ErrNotFound},
		{"unknown kind", func() error { _, err := s.CreateRun(ctx, Run{Kind: "bench"}); return err }(), nil},
		{"invalid params", func() error {
			_, err := s.CreateRun(ctx, Run{Kind: KindRun, Params: json.RawMessage(`nope`)})
			return err
		}(), nil},
		{"missing profile", func() error { _, err := s.CreateRun(ctx, Run{Kind: KindRun, ProfileID: 99}); return err }(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatalf("got no error")
			}
			if c.want != nil && !errors.Is(c.err, c.want) {
				t.Errorf("got %v, want %v", c.err, c.want)
			}
		})
	}
	got, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusOK || got.Error != "" {
		t.Errorf("a refused second finish changed the run: got status %s error %q", got.Status, got.Error)
	}
}

func testListRuns(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	pid, err := s.CreateProfile(ctx, Profile{Label: "sweep"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, r := range []Run{
		{Kind: KindBuild, Label: "a"},
		{Kind: KindRun, Label: "a", ProfileID: pid, Step: 1, Repeat: 1, VUs: 1},
		{Kind: KindRun, Label: "a", ProfileID: pid, Step: 2, Repeat: 1, VUs: 2},
		{Kind: KindRun, Label: "b"},
		{Kind: KindCheck, Label: "a"},
	} {
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids[fmt.Sprintf("%s-%s-%d", r.Kind, r.Label, r.Step)] = id
	}
	if err := s.FinishRun(ctx, ids["run-b-0"], StatusFailed, nil, "boom"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		f    RunFilter
		want []string
	}{
		{RunFilter{}, []string{"check-a-0", "run-b-0", "run-a-2", "run-a-1", "build-a-0"}},
		{RunFilter{Kind: KindRun}, []string{"run-b-0", "run-a-2", "run-a-1"}},
		{RunFilter{Label: "a", Kind: KindRun}, []string{"run-a-2", "run-a-1"}},
		{RunFilter{ProfileID: pid}, []string{"run-a-2", "run-a-1"}},
		{RunFilter{Status: StatusFailed}, []string{"run-b-0"}},
		{RunFilter{Limit: 2}, []string{"check-a-0", "run-b-0"}},
		{RunFilter{Label: "none"}, nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.f), func(t *testing.T) {
			runs, err := s.ListRuns(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []int64
			for _, r := range runs {
				got = append(got, r.ID)
			}
			for _, k := range c.want {
				want = append(want, ids[k])
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got ids %v, want %v (%v)", got, want, c.want)
			}
		})
	}
}

func testProfiles(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	mk := func(label string) int64 {
		t.Helper()
		id, err := s.CreateProfile(ctx, Profile{Label: label, Params: json.RawMessage(`{"vus":[1,2,3,5,8]}`)})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sata := mk("sata")
	nvmeOld := mk("nvme")
	nvmeNew := mk("nvme")
	numeric := mk("42") // a label that looks like an id no profile has
	idLike := mk(fmt.Sprint(sata))

	if err := s.FinishProfile(ctx, sata, StatusOK); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishProfile(ctx, sata, StatusOK); !errors.Is(err, ErrFinished) {
		t.Errorf("finish twice: got %v, want ErrFinished", err)
	}
	p, err := s.GetProfile(ctx, sata)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusOK || p.EndedAt.IsZero() || p.Label != "sata" || string(p.Params) != `{"vus":[1,2,3,5,8]}` {
		t.Errorf("got %+v, want finished sata profile with its params", p)
	}

	cases := []struct {
		ref  string
		want int64 // 0: ErrNotFound
	}{
		{"sata", sata},
		{"nvme", nvmeNew},
		{fmt.Sprint(nvmeOld), nvmeOld},
		{"42", numeric},
		{fmt.Sprint(sata), sata}, // an id wins over a label spelled like it
		{"missing", 0},
		{"0", 0},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			p, err := s.ProfileByLabelOrID(ctx, c.ref)
			if c.want == 0 {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("got %v, %v; want ErrNotFound", p.ID, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != c.want {
				t.Errorf("got profile %d, want %d", p.ID, c.want)
			}
		})
	}

	all, err := s.ListProfiles(ctx, ProfileFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), 5; got != want || all[0].ID != idLike {
		t.Errorf("got %d profiles, first %d; want %d, newest (%d) first", got, all[0].ID, want, idLike)
	}
}

func testCreateRunRefusesPasswords(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	const secret = "hunter2-s3cret"
	cases := []struct {
		target string
		refuse bool
	}{
		{"postgres://bench@db1:5432/tpcc", false},
		{"postgres://bench:REDACTED@db1/tpcc", false},
		{"postgres://bench:xxxxx@db1/tpcc", false},
		{"mysql://root@127.0.0.1:3306/tpcc?tls=false", false},
		{"sqlite:/var/lib/oltplab/tpcc.db", false},
		{"", false},
		{"postgres://bench:" + secret + "@db1:5432/tpcc", true},
		{"mysql://root:" + secret + "@tcp(127.0.0.1:3306)/tpcc", true},
		{"postgres://db1/tpcc?user=bench&password=" + secret, true},
		{"host=db1 user=bench password=" + secret + " dbname=tpcc", true},
		{"host=db1 user=bench password=REDACTED dbname=tpcc", false},
		{"postgres:bench:" + secret + "@db1:5432/tpcc", true},
		{"mysql:bench:" + secret + "@db1:3307/tpcc", true},
		{"mysql:bench:REDACTED@db1:3307/tpcc", false},
		{"mysql://bench@db1/tpcc?allowCleartextPasswords=1", false},
		{"postgres://bench@db1/tpcc?sslpassword=" + secret, true},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			_, err := s.CreateRun(ctx, Run{Kind: KindRun, Target: c.target})
			if c.refuse != errors.Is(err, ErrSecretInTarget) {
				t.Fatalf("got %v, want refused=%v", err, c.refuse)
			}
			if err != nil && bytes.Contains([]byte(err.Error()), []byte(secret)) {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
	runs, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if bytes.Contains([]byte(r.Target), []byte(secret)) {
			t.Errorf("run %d stored a password in its target", r.ID)
		}
	}
}

func TestKindValid(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		want bool
	}{
		{KindBuild, true}, {KindRun, true}, {KindCheck, true}, {KindMonitor, true}, {KindStorage, true},
		{KindBackup, true}, {KindRebuild, true}, {KindCPU, true}, {KindParallel, true}, {KindNeighbours, true},
		{"", false}, {"reindex", false},
	} {
		if got := tc.kind.Valid(); got != tc.want {
			t.Errorf("Kind(%q).Valid() = %v, want %v", tc.kind, got, tc.want)
		}
	}
}

// testCreateProfileRefusesPasswords: a profile's parameters and context
// carry the target too; one that still holds a password is refused before
// anything is written.
func testCreateProfileRefusesPasswords(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	const secret = "hunter2-s3cret"
	bad := []json.RawMessage{
		json.RawMessage(`{"target": "postgres://bench@db1/tpcc?password=` + secret + `"}`),
		json.RawMessage(`{"database": {"target": "postgres://bench:` + secret + `@db1/tpcc"}}`),
	}
	for i, raw := range bad {
		if _, err := s.CreateProfile(ctx, Profile{Label: "p", Params: raw}); !errors.Is(err, ErrSecretInTarget) {
			t.Errorf("params %d: got %v, want ErrSecretInTarget", i, err)
		}
		if _, err := s.CreateProfile(ctx, Profile{Label: "p", Context: raw}); !errors.Is(err, ErrSecretInTarget) {
			t.Errorf("context %d: got %v, want ErrSecretInTarget", i, err)
		}
		if _, err := s.CreateRun(ctx, Run{Kind: KindRun, Params: raw}); !errors.Is(err, ErrSecretInTarget) {
			t.Errorf("run params %d: got %v, want ErrSecretInTarget", i, err)
		}
	}
	if ps, err := s.ListProfiles(ctx, ProfileFilter{}); err != nil || len(ps) != 0 {
		t.Errorf("profiles stored: %d (%v), want none", len(ps), err)
	}
	ok := json.RawMessage(`{"target": "postgres://bench@db1/tpcc?password=REDACTED", "note": "password=x is only text here"}`)
	if _, err := s.CreateProfile(ctx, Profile{Label: "p", Params: ok}); err != nil {
		t.Errorf("redacted target refused: %v", err)
	}
}

// testUpdateProfileParams: what a profile learns while it runs (where an
// adaptive profile's steps stopped) replaces its parameters; a password
// in them, invalid JSON or a profile that does not exist is refused.
func testUpdateProfileParams(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	id, err := s.CreateProfile(ctx, Profile{Label: "auto", Params: json.RawMessage(`{"repeat":"auto"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"repeat":"auto","stopping":{"stops":[{"users":1,"runs":4,"reason":"precision"}]}}`
	if err := s.UpdateProfileParams(ctx, id, json.RawMessage(want)); err != nil {
		t.Fatal(err)
	}
	if p, err := s.GetProfile(ctx, id); err != nil || string(p.Params) != want {
		t.Errorf("params after the update: %s, %v; want %s", p.Params, err, want)
	}
	for name, bad := range map[string]string{"password": `{"target":"postgres://u:secret@h/db"}`, "not JSON": `{"repeat":`} {
		if err := s.UpdateProfileParams(ctx, id, json.RawMessage(bad)); err == nil {
			t.Errorf("%s: update accepted %s", name, bad)
		}
	}
	if err := s.UpdateProfileParams(ctx, id+100, json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("update of a profile that does not exist: got %v, want ErrNotFound", err)
	}
}
