package tpcc

// DeckSize is the number of cards of the mix deck (TPC-C 5.2.4.2).
const DeckSize = 100

// deckCards is how many cards of each kind the deck holds: 45 New-Order,
// 43 Payment, 4 Order-Status, 4 Delivery, 4 Stock-Level. This meets the
// minimum mix of TPC-C 5.2.3 (Payment >= 43%, Order-Status, Delivery and
// Stock-Level >= 4% each) with New-Order taking the rest.
var deckCards = [NumTxKinds]int{
	NewOrderTx:    45,
	PaymentTx:     43,
	OrderStatusTx: 4,
	DeliveryTx:    4,
	StockLevelTx:  4,
}

// Deck selects transaction types as TPC-C 5.2.4.2 describes: a deck of
// 100 cards with the mix's proportions, drawn in a random order and
// reshuffled each time it is exhausted. Each terminal has its own deck.
// A card is one byte: a driver may hold thousands of terminals.
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
