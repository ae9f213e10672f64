package tpch

import (
	"strings"
	"testing"
)

func TestAgree(t *testing.T) {
	for _, c := range []struct {
		kind      Kind
		got, want string
		ok        bool
	}{
		{Text, "FRANCE                   ", "FRANCE", true},
		{Text, "FRANCE", "france", false},
		{Text, "1995-03-15", "1995-03-15", true},
		{Exact, "1995", "1995", true},
		{Exact, "1995.0", "1995", true},
		{Exact, "14876", "14877", false},
		{Money, "4186.95", "4186.950", true},
		{Money, "4186.95", "4186.96", false},
		{Sum, "532348211.65", "532348300.00", true},
		{Sum, "532348211.65", "532348312.00", false},
		{Sum, "-1000", "-1099.5", true},
		{Ratio, "25.575154611454693", "25.5751546114546930", true},
		{Ratio, "25.86", "25.575", false}, // 1.1% off
		{Ratio, "0.0337", "0.0338", true}, // both round to 0.03
		{Ratio, "0.045", "0.0449999", true},
		{Ratio, "0.06", "0.05", false},
		{Ratio, "0.0", "0.0", true},
		{Sum, "NULL", "NULL", true},
		{Sum, "NULL", "0", false},
		{Exact, "x", "1", false},
	} {
		if got := agree(c.kind, c.got, c.want); got != c.ok {
			t.Errorf("agree(%s, %q, %q) = %v, want %v", c.kind, c.got, c.want, got, c.ok)
		}
	}
}

func TestCompareAnswer(t *testing.T) {
	want := [][]string{{"1-URGENT", "93"}, {"2-HIGH", "85"}}
	if err := CompareAnswer(4, [][]string{{"1-URGENT       ", "93"}, {"2-HIGH", "85"}}, want); err != nil {
		t.Errorf("equal answers: %v", err)
	}
	for _, got := range [][][]string{
		{{"1-URGENT", "93"}},
		{{"1-URGENT", "93"}, {"2-HIGH", "86"}},
		{{"2-HIGH", "85"}, {"1-URGENT", "93"}},
		{{"1-URGENT", "93", "x"}, {"2-HIGH", "85"}},
	} {
		err := CompareAnswer(4, got, want)
		if err == nil || !strings.HasPrefix(err.Error(), "Q4") {
			t.Errorf("CompareAnswer(4, %q): %v, want an error naming Q4", got, err)
		}
	}
	for q, kinds := range AnswerKinds {
		if len(kinds) == 0 {
			t.Errorf("Q%d has no answer columns", q+1)
		}
	}
}
