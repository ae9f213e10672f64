package tpcc

import (
	"fmt"
	"strings"
	"testing"
)

// TestConditionsCoverClause: 3.3.2.1 .. 3.3.2.12, each once, in order.
func TestConditionsCoverClause(t *testing.T) {
	if got, want := len(Conditions), 12; got != want {
		t.Fatalf("conditions: got %d, want %d", got, want)
	}
	seen := map[string]bool{}
	for i, c := range Conditions {
		want := fmt.Sprintf("3.3.2.%d", i+1)
		if c.Clause != want {
			t.Errorf("condition %d: got clause %s, want %s", i, c.Clause, want)
		}
		if seen[c.Clause] {
			t.Errorf("clause %s listed twice", c.Clause)
		}
		seen[c.Clause] = true
	}
}

func TestConditionsWellFormed(t *testing.T) {
	for _, c := range Conditions {
		t.Run(c.Clause, func(t *testing.T) {
			if c.Name == "" || c.Query == "" || len(c.columns) == 0 {
				t.Fatalf("got name %q, query %q, %d columns; want all set", c.Name, c.Query, len(c.columns))
			}
			// Every '?' is the money tolerance: a condition compares money
			// if and only if it takes the tolerance.
			money := false
			for _, col := range c.columns {
				money = money || col.money
			}
			if got, want := strings.Count(c.Query, "?") > 0, money; got != want {
				t.Errorf("takes tolerance: got %v, want %v (money columns)", got, want)
			}
			// The columns a violation row returns: count the top-level
			// select list (commas outside parentheses).
			if got, want := selectListLen(c.Query), len(c.columns); got != want {
				t.Errorf("select list: got %d columns, want %d labels", got, want)
			}
			if got, want := c.OnlyAfterBuild, c.Clause == "3.3.2.11"; got != want {
				t.Errorf("OnlyAfterBuild: got %v, want %v", got, want)
			}
		})
	}
}

// selectListLen counts the expressions between the leading SELECT and the
// first FROM at parenthesis depth zero.
func selectListLen(q string) int {
	q = strings.TrimPrefix(q, "SELECT ")
	depth, n := 0, 1
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		case 'F':
			if depth == 0 && strings.HasPrefix(q[i:], "FROM ") {
				return n
			}
		}
	}
	return -1
}
