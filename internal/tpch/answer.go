package tpch

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is how clause 2.1.3.5 compares one column of an answer with the
// query validation output.
type Kind int

const (
	// Text: strings and dates, equal once leading and trailing blanks
	// are dropped (clause 2.1.3.4 e allows them).
	Text Kind = iota
	// Exact: singleton integers and the results of COUNT, exactly equal
	// (2.1.3.5 a).
	Exact
	// Money: singleton decimal values (balances, prices), equal to the
	// cent (2.1.3.5 a).
	Money
	// Sum: results of SUM, within $100 (2.1.3.5 c).
	Sum
	// Ratio: ratios and results of AVG, within 1% once rounded to the
	// nearest hundredth (2.1.3.5 b, d).
	Ratio
)

func (k Kind) String() string {
	return [...]string{"text", "exact", "money", "sum", "ratio"}[k]
}

// AnswerKinds are the kinds of the columns of each query's answer, in
// select-list order.
var AnswerKinds = [Queries][]Kind{
	{Text, Text, Sum, Sum, Sum, Sum, Ratio, Ratio, Ratio, Exact},
	{Money, Text, Text, Exact, Text, Text, Text, Text},
	{Exact, Sum, Text, Exact},
	{Text, Exact},
	{Text, Sum},
	{Sum},
	{Text, Text, Exact, Sum},
	{Exact, Ratio},
	{Text, Exact, Sum},
	{Exact, Text, Sum, Money, Text, Text, Text, Text},
	{Exact, Sum},
	{Text, Sum, Sum},
	{Exact, Exact},
	{Ratio},
	{Exact, Text, Text, Text, Sum},
	{Text, Text, Exact, Exact},
	{Ratio},
	{Text, Exact, Exact, Text, Money, Sum},
	{Sum},
	{Text, Text},
	{Text, Exact},
	{Text, Exact, Sum},
}

// CompareAnswer compares the answer of query q with the validation output
// want, row by row in order, each value by its column's Kind (clause
// 2.1.3.5). Values are text; NULL is "NULL". It returns nil when they
// agree, or an error naming the first difference.
func CompareAnswer(q int, got, want [][]string) error {
	if q < 1 || q > Queries {
		return fmt.Errorf("query %d: want 1..%d", q, Queries)
	}
	kinds := AnswerKinds[q-1]
	if len(got) != len(want) {
		return fmt.Errorf("Q%d: %d rows, want %d", q, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(kinds) || len(want[i]) != len(kinds) {
			return fmt.Errorf("Q%d row %d: %d and %d columns, want %d", q, i+1, len(got[i]), len(want[i]), len(kinds))
		}
		for j, k := range kinds {
			if !agree(k, got[i][j], want[i][j]) {
				return fmt.Errorf("Q%d row %d column %d (%s): %q, want %q", q, i+1, j+1, k, got[i][j], want[i][j])
			}
		}
	}
	return nil
}

func agree(k Kind, got, want string) bool {
	got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	if got == want {
		return true
	}
	if k == Text || got == "NULL" || want == "NULL" {
		return false
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	switch k {
	case Exact:
		return g == w
	case Money:
		return math.Abs(g-w) < 0.005+1e-9*math.Abs(w)
	case Sum:
		return math.Abs(g-w) <= 100
	case Ratio:
		// 0.99·v ≤ round(r, 2) ≤ 1.01·v with v the validation value at
		// its hundredth; a value on the edge of a hundredth may round
		// either way in another product's arithmetic, so a result within
		// 1% before rounding agrees too.
		rg, rw := math.Round(g*100)/100, math.Round(w*100)/100
		return math.Abs(rg-rw) <= 0.01*math.Abs(rw)+1e-9 || math.Abs(g-w) <= 0.01*math.Abs(w)
	}
	return false
}
