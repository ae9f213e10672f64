package tpcc

import "fmt"

// DeckSize is the number of cards of the mix deck (TPC-C 5.2.4.2).
const DeckSize = 23

// deckCards is how many cards of each kind the deck holds: 10 New-Order,
// 10 Payment, 1 Order-Status, 1 Delivery, 1 Stock-Level.
//
// TPC-C 5.2.3 sets minimums over the measurement interval: Payment >=
// 43%, Order-Status, Delivery and Stock-Level >= 4% each, New-Order the
// rest. A deck that deals exactly the minimums (45/43/4/4/4 of 100)
// undercuts them in about half of all windows, because the window ends
// mid-deck for every virtual user. This deck deals them with margin:
// Payment 10/23 = 43.48%, the others 1/23 = 4.35% each, New-Order the
// remaining 43.48%. Whatever the partial decks at a window's edges hold,
// a window of at least MinCardsPerUser cards per virtual user (528 for
// the 4% kinds, 2,350 for Payment) meets every minimum; shorter windows
// meet them unless the draw is unlucky. It is also HammerDB's TPROC-C
// mix (10/10/1/1/1 of 23 equally likely choices), so NOPM compares with
// HammerDB's.
var deckCards = [NumTxKinds]int{
	NewOrderTx:    10,
	PaymentTx:     10,
	OrderStatusTx: 1,
	DeliveryTx:    1,
	StockLevelTx:  1,
}

// MinMixPct is the minimum share of each kind over a measurement interval,
// in percent (TPC-C 5.2.3); New-Order has none: it is the rest.
var MinMixPct = [NumTxKinds]float64{
	NewOrderTx:    0,
	PaymentTx:     43,
	OrderStatusTx: 4,
	DeliveryTx:    4,
	StockLevelTx:  4,
}

// DeckPct returns the share of kind k in the deck, in percent.
func DeckPct(k TxKind) float64 { return 100 * float64(deckCards[k]) / DeckSize }

// MinCardsPerUser is the number of consecutive cards a virtual user must
// draw for the share of kind k to meet its 5.2.3 minimum whatever the
// window's edges cut: the worst case leaves two partial decks (up to
// DeckSize-1 cards each) with no card of k, or as few as they can hold.
// 0 for a kind without a minimum.
func MinCardsPerUser(k TxKind) int {
	if MinMixPct[k] == 0 {
		return 0
	}
	c, others := deckCards[k], DeckSize-deckCards[k]
	// A partial deck of p cards holds at least max(0, p-others) of k;
	// taking p = others at each edge costs the most share.
	for n := 1; ; n++ {
		if 100*float64(worstCount(n, c, others)) >= MinMixPct[k]*float64(n) {
			ok := true
			for m := n; m < n+2*DeckSize; m++ { // the bound holds from here on
				if 100*float64(worstCount(m, c, others)) < MinMixPct[k]*float64(m) {
					ok = false
					break
				}
			}
			if ok {
				return n
			}
		}
	}
}

// worstCount is the fewest cards of a kind with c cards per deck (others
// not of it) that n consecutive cards can hold.
func worstCount(n, c, others int) int {
	worst := n
	for lead := 0; lead < DeckSize && lead <= n; lead++ {
		rest := n - lead
		full, tail := rest/DeckSize, rest%DeckSize
		got := max(0, lead-others) + full*c + max(0, tail-others)
		worst = min(worst, got)
	}
	return worst
}

// Deck selects transaction types as TPC-C 5.2.4.2 describes: a deck of
// DeckSize cards with the mix's proportions (deckCards), drawn in a
// random order and reshuffled each time it is exhausted. Each terminal
// has its own deck, in both modes. A card is one byte: a driver may hold
// thousands of terminals.
type Deck struct {
	r     *Rand
	cards [DeckSize]uint8
	next  int
}

// NewDeck returns a deck that shuffles with r.
func NewDeck(r *Rand) Deck {
	d := Deck{r: r, next: DeckSize}
	i := 0
	for k, n := range deckCards {
		for range n {
			d.cards[i] = uint8(k)
			i++
		}
	}
	return d
}

// Next returns the next transaction type, reshuffling the deck first when
// every card has been drawn.
func (d *Deck) Next() TxKind {
	if d.next == DeckSize {
		for i := DeckSize - 1; i > 0; i-- {
			j := d.r.Uniform(0, i)
			d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
		}
		d.next = 0
	}
	k := d.cards[d.next]
	d.next++
	return TxKind(k)
}

// DeckDescription names the deck in stored parameters, so that results
// dealt from different decks show the difference when compared.
func DeckDescription() string {
	s := fmt.Sprintf("%d cards:", DeckSize)
	for k, n := range deckCards {
		if k > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d %s", n, TxKind(k))
	}
	return s + " (TPC-C 5.2.4.2)"
}
