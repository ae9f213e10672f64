package store

import (
	"context"
	"errors"
	"testing"
)

// testLeftovers: what a command is about to create is recorded with its
// writer and mark, listed while present (by experiment too), and ends
// once: removed, kept or left alone.
func testLeftovers(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	exp, err := s.CreateExperiment(ctx, Experiment{Name: "e"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Leftover{
		{Path: "/b/oltplab-backup-1-c1", Kind: "backup", Mark: "M1", ExperimentID: exp},
		{Path: "/b/oltplab-backup-1-c1-restored", Kind: "restored copy", Mark: "M2", ExperimentID: exp},
		{Path: "/d/oltplab-fio-M3.dat", Kind: "fio test file", Mark: "M3"},
	} {
		if _, err := s.RecordLeftover(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordLeftover(ctx, Leftover{Path: "/x", Kind: "backup", Mark: "M1"}); err == nil {
		t.Error("a mark recorded twice: got no error")
	}
	if _, err := s.RecordLeftover(ctx, Leftover{Path: "/x", Kind: "backup"}); err == nil {
		t.Error("a leftover without a mark: got no error")
	}
	all, err := s.Leftovers(ctx, LeftoverFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Mark != "M1" || all[0].State != LeftoverPresent || all[0].Writer != s.writer ||
		all[0].ExperimentID != exp || all[2].ExperimentID != 0 || all[0].CreatedAt.IsZero() {
		t.Fatalf("present: %+v, want the three, oldest first, written by this process", all)
	}
	if err := s.EndLeftover(ctx, "M1", LeftoverRemoved, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.EndLeftover(ctx, "M2", LeftoverKept, "kept with --keep"); err != nil {
		t.Fatal(err)
	}
	if err := s.EndLeftover(ctx, "M1", LeftoverLeft, ""); !errors.Is(err, ErrFinished) {
		t.Errorf("end twice: got %v, want ErrFinished", err)
	}
	if err := s.EndLeftover(ctx, "nope", LeftoverRemoved, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("end an unknown mark: got %v, want ErrNotFound", err)
	}
	if err := s.EndLeftover(ctx, "M3", LeftoverPresent, ""); err == nil {
		t.Error("end as present: got no error")
	}
	present, err := s.Leftovers(ctx, LeftoverFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(present) != 1 || present[0].Mark != "M3" {
		t.Errorf("present after two ended: %+v, want M3 alone", present)
	}
	ofExp, err := s.Leftovers(ctx, LeftoverFilter{ExperimentID: exp, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ofExp) != 2 || ofExp[1].State != LeftoverKept || ofExp[1].Note != "kept with --keep" || ofExp[0].EndedAt.IsZero() {
		t.Errorf("the experiment's: %+v, want M1 removed and M2 kept", ofExp)
	}
}
