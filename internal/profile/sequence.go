package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxVUs bounds every virtual-user count a sequence may hold; larger
// values are almost certainly typing mistakes and would only make the
// generators loop for long.
const maxVUs = 1_000_000

// MaxSlots bounds the runs of one profile, steps times repeats: ten
// thousand runs of the shortest window (1 s, no ramp-up) take nearly
// three hours; more is a typing mistake, and a profile's order of runs is
// laid out before the first one starts.
const MaxSlots = 10_000

// CheckSlots refuses a profile of more than MaxSlots runs (steps times
// repeats).
func CheckSlots(steps, repeats int) error {
	if steps > 0 && repeats > MaxSlots/steps {
		return fmt.Errorf("%d steps × %d repeats: at most %d runs in one profile", steps, repeats, MaxSlots)
	}
	return nil
}

// ParseVUs parses a virtual-user sequence. Accepted forms:
//
//	89                 one step
//	1,2,3,5            an explicit list: positive, no duplicates, kept in
//	                   the order given
//	fib:89             Fibonacci numbers 1,2,3,5,8,... up to 89
//	pow2:128           powers of two 1,2,4,... up to 128
//	geo:256:1024:1.41  a geometric sweep from 256 to 1024 with a nominal
//	                   factor of 1.41
//
// For geo the factor is nominal: the number of steps is
// n = round(ln(TO/FROM)/ln(FACTOR)) (at least 1 when TO > FROM), and the
// steps are spaced evenly on a log scale so that both FROM and TO are
// hit exactly: step k is round(FROM*(TO/FROM)^(k/n)). This is how the
// studies' "x1.41" sweep 256,362,512,724,1024 arises (the true factor
// is the square root of two); repeatedly multiplying by 1.41 would give
// 256,361,509,718,1012 instead. Values that round to the same integer
// are kept once.
func ParseVUs(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("virtual users: empty sequence")
	}
	kind, rest, hasKind := strings.Cut(s, ":")
	if !hasKind {
		return parseList(s)
	}
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "fib":
		n, err := parseCount("fib", "N", rest)
		if err != nil {
			return nil, err
		}
		return fibonacci(n), nil
	case "pow2":
		n, err := parseCount("pow2", "N", rest)
		if err != nil {
			return nil, err
		}
		return powersOfTwo(n), nil
	case "geo":
		return parseGeo(rest)
	default:
		return nil, fmt.Errorf("virtual users %q: unknown sequence %q (want a list, fib:N, pow2:N or geo:FROM:TO:FACTOR)", s, kind)
	}
}

func parseList(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	out := make([]int, 0, len(parts))
	seen := make(map[int]bool, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("virtual users %q: item %d is empty", s, i+1)
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("virtual users %q: item %d %q is not an integer", s, i+1, p)
		}
		if v <= 0 {
			return nil, fmt.Errorf("virtual users %q: item %d is %d, want a positive number", s, i+1, v)
		}
		if v > maxVUs {
			return nil, fmt.Errorf("virtual users %q: item %d is %d, above the limit of %d", s, i+1, v, maxVUs)
		}
		if seen[v] {
			return nil, fmt.Errorf("virtual users %q: %d appears more than once", s, v)
		}
		seen[v] = true
		out = append(out, v)
	}
	if len(out) > MaxSlots {
		return nil, fmt.Errorf("virtual users: %d steps, at most %d", len(out), MaxSlots)
	}
	return out, nil
}

// parseCount parses the positive bound of a generated sequence.
func parseCount(kind, what, s string) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("virtual users %s:%s: %s %q is not an integer", kind, s, what, s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("virtual users %s:%s: %s is %d, want a positive number", kind, s, what, v)
	}
	if v > maxVUs {
		return 0, fmt.Errorf("virtual users %s:%s: %s is %d, above the limit of %d", kind, s, what, v, maxVUs)
	}
	return v, nil
}

// fibonacci returns 1,2,3,5,8,... up to and including n (the studies'
// sweep 1,2,3,5,8,13,21,34,55,89 for n = 89).
func fibonacci(n int) []int {
	var out []int
	for a, b := 1, 2; a <= n; a, b = b, a+b {
		out = append(out, a)
	}
	return out
}

// powersOfTwo returns 1,2,4,... up to and including n.
func powersOfTwo(n int) []int {
	var out []int
	for v := 1; v <= n; v *= 2 {
		out = append(out, v)
	}
	return out
}

func parseGeo(rest string) ([]int, error) {
	spec := "geo:" + rest
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("virtual users %q: want geo:FROM:TO:FACTOR", spec)
	}
	from, err := parseCount("geo", "FROM", parts[0])
	if err != nil {
		return nil, err
	}
	to, err := parseCount("geo", "TO", parts[1])
	if err != nil {
		return nil, err
	}
	if to < from {
		return nil, fmt.Errorf("virtual users %q: TO %d is below FROM %d", spec, to, from)
	}
	factor, err := strconv.ParseFloat(strings.TrimSpace(parts[2]), 64)
	if err != nil || math.IsNaN(factor) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("virtual users %q: FACTOR %q is not a number", spec, parts[2])
	}
	if factor <= 1 {
		return nil, fmt.Errorf("virtual users %q: FACTOR is %g, want more than 1", spec, factor)
	}
	if to == from {
		return []int{from}, nil
	}
	span := float64(to) / float64(from)
	n := int(math.Round(math.Log(span) / math.Log(factor)))
	n = max(n, 1)
	if n > MaxSlots {
		return nil, fmt.Errorf("virtual users %q: FACTOR %g gives more than %d steps", spec, factor, MaxSlots)
	}
	out := []int{from}
	for k := 1; k < n; k++ {
		v := int(math.Round(float64(from) * math.Pow(span, float64(k)/float64(n))))
		if v > out[len(out)-1] && v < to {
			out = append(out, v)
		}
	}
	return append(out, to), nil
}

// Slot is one measurement in a profile's execution order: the Step-th
// virtual-user count of the sequence, for its Repeat-th time (both
// zero-based).
type Slot struct {
	Step   int
	Repeat int
}

// Order returns the order in which the steps x repeats of a profile are
// executed.
//
// Without interleave every step is repeated back to back:
// (0,0) (0,1) (0,2) (1,0) (1,1) ... Cheapest, but any drift (the TPC-C
// tables grow with every New-Order, caches warm, the device heats up or
// its garbage collection kicks in) lands entirely on the later steps.
//
// With interleave the whole sweep runs once per repeat, alternating
// direction: repeat 0 ascends, repeat 1 descends, repeat 2 ascends
// again. Each step then sees early, middle and late conditions, so the
// drift spreads across steps and shows up as spread within a step
// instead of as a slope across steps.
//
// Non-positive steps or repeats give no slots.
func Order(steps, repeats int, interleave bool) []Slot {
	if steps <= 0 || repeats <= 0 {
		return nil
	}
	out := make([]Slot, 0, steps*repeats)
	if !interleave {
		for s := range steps {
			for r := range repeats {
				out = append(out, Slot{Step: s, Repeat: r})
			}
		}
		return out
	}
	for r := range repeats {
		for i := range steps {
			s := i
			if r%2 == 1 {
				s = steps - 1 - i
			}
			out = append(out, Slot{Step: s, Repeat: r})
		}
	}
	return out
}
