package tpcc

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestPacingTable(t *testing.T) {
	// TPC-C 5.2.5.7, row by row.
	want := []struct {
		kind         TxKind
		keying       time.Duration
		think        time.Duration
		limit        time.Duration
		minMixPct    float64
		deckSharePct float64
	}{
		{NewOrderTx, 18 * time.Second, 12 * time.Second, 5 * time.Second, 0, 100 * 10.0 / 23},
		{PaymentTx, 3 * time.Second, 12 * time.Second, 5 * time.Second, 43, 100 * 10.0 / 23},
		{OrderStatusTx, 2 * time.Second, 10 * time.Second, 5 * time.Second, 4, 100 * 1.0 / 23},
		{DeliveryTx, 2 * time.Second, 5 * time.Second, 5 * time.Second, 4, 100 * 1.0 / 23},
		{StockLevelTx, 2 * time.Second, 5 * time.Second, 20 * time.Second, 4, 100 * 1.0 / 23},
	}
	for _, w := range want {
		t.Run(w.kind.String(), func(t *testing.T) {
			if got := KeyingTime(w.kind); got != w.keying {
				t.Errorf("keying time: got %v, want %v", got, w.keying)
			}
			if got := ThinkTimeMean(w.kind); got != w.think {
				t.Errorf("think time mean: got %v, want %v", got, w.think)
			}
			if got := ResponseTimeLimit(w.kind); got != w.limit {
				t.Errorf("90th percentile limit: got %v, want %v", got, w.limit)
			}
			if got := MinMixPct[w.kind]; got != w.minMixPct {
				t.Errorf("minimum mix: got %v%%, want %v%%", got, w.minMixPct)
			}
			if got := 100 * MixShare(w.kind); math.Abs(got-w.deckSharePct) > 1e-9 {
				t.Errorf("deck share: got %v%%, want %v%%", got, w.deckSharePct)
			}
		})
	}
}

// TestMaxNewOrdersPerMinute: the cycle of the deck's mix (10/10/1/1/1 of
// 23) is (10×30 + 10×15 + 12 + 7 + 7) / 23 = 476/23 = 20.70 s, and ten
// terminals submit 10 × 10/23 × 60 / (476/23) = 6000/476 = 12.61
// New-Orders per minute. The same sum over the 5.2.3 minimums (45% New-
// Order, cycle 20.99 s) gives the often-quoted 12.86.
func TestMaxNewOrdersPerMinute(t *testing.T) {
	if got, want := MeanCycle(), 476*time.Second/23; (got - want).Abs() > time.Nanosecond {
		t.Errorf("mean cycle: got %v, want %v", got, want)
	}
	if got, want := MaxNewOrdersPerMinute(TerminalsPerWarehouse), 6000.0/476; math.Abs(got-want) > 1e-6 {
		t.Errorf("maximum per warehouse: got %.4f tpmC, want %.4f", got, want)
	}
	if got, want := MaxNewOrdersPerMinute(1000), 100*MaxNewOrdersPerMinute(10); math.Abs(got-want) > 1e-9 {
		t.Errorf("1,000 terminals: got %v, want 100 warehouses' worth %v", got, want)
	}
}

// truncatedExpCDF is the distribution function of a negative exponential
// of mean mu truncated at cut (the mass beyond cut sits at cut).
func truncatedExpCDF(x, mu, cut float64) float64 {
	if x >= cut {
		return 1
	}
	return 1 - math.Exp(-x/mu)
}

// TestThinkTimeDistribution draws think times of each kind and checks
// them against TPC-C 5.2.5.4: none beyond 10 × the mean; the sample mean
// within four standard errors of the truncated distribution's mean
// µ(1 - e^-10); and the whole distribution, by a Kolmogorov-Smirnov test
// at the 0.1% level, a negative exponential of that mean.
func TestThinkTimeDistribution(t *testing.T) {
	const n = 100000
	for k := range NumTxKinds {
		kind := TxKind(k)
		t.Run(kind.String(), func(t *testing.T) {
			r := NewRand(7, TerminalStream(k))
			mu := ThinkTimeMean(kind).Seconds()
			cut := ThinkTimeTruncation * mu
			xs := make([]float64, n)
			var sum, sumSq float64
			for i := range xs {
				x := r.ThinkTime(kind).Seconds()
				if x < 0 || x > cut+1e-9 {
					t.Fatalf("think time %v s outside [0, %v]", x, cut)
				}
				xs[i] = x
				sum += x
				sumSq += x * x
			}
			mean := sum / n
			sd := math.Sqrt(sumSq/n - mean*mean)
			wantMean := mu * (1 - math.Exp(-ThinkTimeTruncation))
			if se := sd / math.Sqrt(n); math.Abs(mean-wantMean) > 4*se {
				t.Errorf("mean think time %.4f s, want %.4f ± %.4f (4 standard errors)", mean, wantMean, 4*se)
			}
			// An exponential's standard deviation equals its mean.
			if math.Abs(sd-mu)/mu > 0.03 {
				t.Errorf("standard deviation %.4f s, want about the mean %.4f s", sd, mu)
			}
			slices.Sort(xs)
			var d float64
			for i, x := range xs {
				f := truncatedExpCDF(x, mu, cut)
				d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
			}
			// Kolmogorov-Smirnov critical value at alpha = 0.001.
			if crit := 1.95 / math.Sqrt(n); d > crit {
				t.Errorf("Kolmogorov-Smirnov distance %.5f to the negative exponential exceeds %.5f", d, crit)
			}
		})
	}
}

// TestThinkTimeFormula: Tt = -ln(r) × µ (TPC-C 5.2.5.4) at chosen r:
// r = 1 gives no think time, r = 1/e the mean, and the smallest r the
// generator yields (2^-53, -ln of which is 36.7) is cut at 10 × µ.
func TestThinkTimeFormula(t *testing.T) {
	mu := 12 * time.Second
	for _, c := range []struct {
		name string
		u    float64
		want time.Duration
	}{
		{"r=1", 1, 0},
		{"r=1/e", math.Exp(-1), mu},
		{"r=e^-10", math.Exp(-10), 10 * mu},
		{"smallest r", 1.0 / (1 << 53), 10 * mu},
		{"r=0.5", 0.5, time.Duration(math.Ln2 * float64(mu))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := thinkTime(c.u, mu); (got - c.want).Abs() > time.Microsecond {
				t.Errorf("thinkTime(%v, %v) = %v, want %v", c.u, mu, got, c.want)
			}
		})
	}
}

// TestDeckPositions checks the shuffle of TPC-C 5.2.4.2 statistically:
// over many decks, every kind is equally likely at every position of the
// deck, within 4.5 standard errors of its share (a biased shuffle, such as
// one that swaps with any position rather than a not-yet-placed one,
// favours some positions).
func TestDeckPositions(t *testing.T) {
	const decks = 20000
	d := NewDeck(NewRand(3, 9))
	var counts [DeckSize][NumTxKinds]int
	for range decks {
		for pos := range DeckSize {
			counts[pos][d.Next()]++
		}
	}
	for k := range NumTxKinds {
		p := MixShare(TxKind(k))
		want := p * decks
		se := math.Sqrt(decks * p * (1 - p))
		for pos := range DeckSize {
			if got := float64(counts[pos][k]); math.Abs(got-want) > 4.5*se {
				t.Errorf("%s at deck position %d: %v times in %d decks, want %.0f ± %.0f", TxKind(k), pos, got, decks, want, 4.5*se)
			}
		}
	}
}

// TestMixOfPartialDecks: terminals that each draw only part of a deck (a
// 10-minute window holds about 29 cycles of a terminal) realise the mix
// with sampling noise around the deck's shares. Over 1,000 terminals each
// share falls within four standard errors of the hypergeometric draw,
// which is why a window's mix is judged against 5.2.3 with that noise.
func TestMixOfPartialDecks(t *testing.T) {
	const terminals, draws = 1000, 29
	run := NewRunConstants(NewRand(1, ConstantsStream), Constants{CLast: 17})
	var counts [NumTxKinds]int
	for i := range terminals {
		term := NewTerminal(NewRand(5, TerminalStream(i)), run, 100, i%100+1, i/100+1)
		for range draws {
			counts[term.NextKind()]++
		}
	}
	n := float64(terminals * draws)
	for k := range NumTxKinds {
		p := MixShare(TxKind(k))
		// Variance of one terminal's count: hypergeometric, draws of DeckSize.
		v := draws * p * (1 - p) * float64(DeckSize-draws) / float64(DeckSize-1)
		se := math.Sqrt(terminals*v) / n
		if got := float64(counts[k]) / n; math.Abs(got-p) > 4*se {
			t.Errorf("%s: share %.4f, want %.4f ± %.4f", TxKind(k), got, p, 4*se)
		}
	}
}
