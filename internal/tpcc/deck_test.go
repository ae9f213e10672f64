package tpcc

import (
	"fmt"
	"testing"
)

func TestDeckCounts(t *testing.T) {
	want := [NumTxKinds]int{45, 43, 4, 4, 4}
	d := NewDeck(NewRand(1, 1))
	var orders [3][DeckSize]TxKind
	for deck := range 50 {
		t.Run(fmt.Sprint("deck ", deck), func(t *testing.T) {
			var got [NumTxKinds]int
			for i := range DeckSize {
				k := d.Next()
				got[k]++
				if deck < 3 {
					orders[deck][i] = k
				}
			}
			if got != want {
				t.Errorf("cards per kind = %v, want %v (TPC-C 5.2.4.2)", got, want)
			}
		})
	}
	if orders[0] == orders[1] || orders[1] == orders[2] {
		t.Errorf("two consecutive decks in the same order: the deck is not reshuffled")
	}
}
