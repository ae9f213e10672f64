package profile

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseVUs(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"89", []int{89}},
		{" 1, 2,3,5 ", []int{1, 2, 3, 5}},
		{"8,4,2", []int{8, 4, 2}}, // user order is kept
		{"fib:89", []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}},
		{"fib:100", []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}},
		{"fib:1", []int{1}},
		{"FIB:4", []int{1, 2, 3}},
		{"pow2:128", []int{1, 2, 4, 8, 16, 32, 64, 128}},
		{"pow2:100", []int{1, 2, 4, 8, 16, 32, 64}},
		{"pow2:1", []int{1}},
		{"geo:256:1024:1.41", []int{256, 362, 512, 724, 1024}},
		{"geo:256:1024:1.4142", []int{256, 362, 512, 724, 1024}},
		{"geo:1:100:2", []int{1, 2, 4, 7, 14, 27, 52, 100}},
		{"geo:10:1000:10", []int{10, 100, 1000}},
		{"geo:256:300:2", []int{256, 300}}, // at least one step up to TO
		{"geo:64:64:1.5", []int{64}},
		{"geo:1:4:1.1", []int{1, 2, 3, 4}}, // rounding duplicates kept once
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVUs(tt.in)
			if err != nil {
				t.Fatalf("ParseVUs(%q): %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseVUs(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseVUsErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // a fragment of the one-line message
	}{
		{"", "empty sequence"},
		{"1,,3", "item 2 is empty"},
		{"1,x", `item 2 "x" is not an integer`},
		{"1,0,3", "item 2 is 0, want a positive number"},
		{"-5", "item 1 is -5, want a positive number"},
		{"1,2,1", "1 appears more than once"},
		{"2000000", "above the limit"},
		{"fib:0", "want a positive number"},
		{"fib:x", "is not an integer"},
		{"pow2:-1", "want a positive number"},
		{"lin:10", `unknown sequence "lin"`},
		{"geo:256:1024", "want geo:FROM:TO:FACTOR"},
		{"geo:1024:256:1.41", "TO 256 is below FROM 1024"},
		{"geo:1:10:1", "FACTOR is 1, want more than 1"},
		{"geo:1:10:abc", `FACTOR "abc" is not a number`},
		{"geo:1:10:NaN", "is not a number"},
		{"geo:0:10:2", "FROM is 0"},
		{"geo:1:1000000:1.0001", "gives more than 10000 steps"},
		{longList(MaxSlots + 1), "10001 steps, at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVUs(tt.in)
			if err == nil {
				t.Fatalf("ParseVUs(%q) = %v, want an error containing %q", tt.in, got, tt.wantErr)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.wantErr) || strings.Contains(msg, "\n") {
				t.Errorf("ParseVUs(%q) error %q, want one line containing %q", tt.in, msg, tt.wantErr)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name           string
		steps, repeats int
		interleave     bool
		want           []Slot
	}{
		{"3x2 back to back", 3, 2, false, []Slot{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}}},
		{"3x3 interleaved", 3, 3, true, []Slot{
			{0, 0}, {1, 0}, {2, 0},
			{2, 1}, {1, 1}, {0, 1},
			{0, 2}, {1, 2}, {2, 2},
		}},
		{"1x3 interleaved", 1, 3, true, []Slot{{0, 0}, {0, 1}, {0, 2}}},
		{"0 steps", 0, 3, true, nil},
		{"0 repeats", 3, 0, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Order(tt.steps, tt.repeats, tt.interleave)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Order(%d, %d, %v) = %v, want %v", tt.steps, tt.repeats, tt.interleave, got, tt.want)
			}
		})
	}
}

// TestOrderCoversEverySlotOnce checks the invariant for many shapes:
// every (step, repeat) pair appears exactly once, and interleaving puts
// each step's repeats in different sweeps.
func TestOrderCoversEverySlotOnce(t *testing.T) {
	for _, interleave := range []bool{false, true} {
		for steps := 1; steps <= 6; steps++ {
			for repeats := 1; repeats <= 4; repeats++ {
				got := Order(steps, repeats, interleave)
				if len(got) != steps*repeats {
					t.Fatalf("Order(%d, %d, %v) has %d slots, want %d", steps, repeats, interleave, len(got), steps*repeats)
				}
				seen := map[Slot]bool{}
				for _, s := range got {
					if s.Step < 0 || s.Step >= steps || s.Repeat < 0 || s.Repeat >= repeats || seen[s] {
						t.Fatalf("Order(%d, %d, %v): slot %v out of range or repeated in %v", steps, repeats, interleave, s, got)
					}
					seen[s] = true
				}
			}
		}
	}
}

// longList is the list 1,2,...,n.
func longList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(items, ",")
}

// TestCheckSlots: steps times repeats beyond MaxSlots is refused, without
// overflowing.
func TestCheckSlots(t *testing.T) {
	for _, c := range []struct {
		steps, repeats int
		ok             bool
	}{{1, 1, true}, {10, 1000, true}, {10, 1001, false}, {2, 1 << 62, false}, {MaxSlots, 1, true}, {MaxSlots + 1, 1, false}} {
		if err := CheckSlots(c.steps, c.repeats); (err == nil) != c.ok {
			t.Errorf("CheckSlots(%d, %d) = %v, want ok %v", c.steps, c.repeats, err, c.ok)
		}
	}
}
