package tpcc

import (
	"math"
	"time"
)

// TerminalsPerWarehouse is the terminal population of one warehouse
// (TPC-C 4.2.2): ten terminals, each bound to its home warehouse for the
// whole measurement (2.4.1.1) and to a district of its own (2.8.1.1).
const TerminalsPerWarehouse = 10

// keyingTimes are the minimum keying times of TPC-C 5.2.5.7, per kind: the
// time an emulated user spends filling the input screen before sending it.
// Keying time is constant for a transaction type (5.2.5.2).
var keyingTimes = [NumTxKinds]time.Duration{
	NewOrderTx:    18 * time.Second,
	PaymentTx:     3 * time.Second,
	OrderStatusTx: 2 * time.Second,
	DeliveryTx:    2 * time.Second,
	StockLevelTx:  2 * time.Second,
}

// thinkTimeMeans are the minimum means of the think-time distributions of
// TPC-C 5.2.5.7, per kind: the time an emulated user spends reading the
// output screen before selecting the next transaction from the menu.
var thinkTimeMeans = [NumTxKinds]time.Duration{
	NewOrderTx:    12 * time.Second,
	PaymentTx:     12 * time.Second,
	OrderStatusTx: 10 * time.Second,
	DeliveryTx:    5 * time.Second,
	StockLevelTx:  5 * time.Second,
}

// ThinkTimeTruncation is where TPC-C 5.2.5.4 allows the think-time
// distribution to be truncated: at 10 times its mean.
const ThinkTimeTruncation = 10

// KeyingTime returns the keying time of kind (TPC-C 5.2.5.7).
func KeyingTime(k TxKind) time.Duration { return keyingTimes[k] }

// ThinkTimeMean returns the mean of kind's think-time distribution before
// truncation (TPC-C 5.2.5.7).
func ThinkTimeMean(k TxKind) time.Duration { return thinkTimeMeans[k] }

// ThinkTime draws the think time that follows a transaction of kind
// (TPC-C 5.2.5.4): taken independently from a negative exponential
// distribution, Tt = -ln(r) × µ with r uniform in (0, 1] and µ the mean of
// kind, truncated at 10 × µ (a draw above it is replaced by it). The
// truncated distribution's mean is µ × (1 - e^-10), within 0.005% of µ.
func (r *Rand) ThinkTime(k TxKind) time.Duration {
	return thinkTime(r.unitOpenZero(), thinkTimeMeans[k])
}

// thinkTime is -ln(u) × mean, truncated at ThinkTimeTruncation × mean.
func thinkTime(u float64, mean time.Duration) time.Duration {
	mu := float64(mean)
	return time.Duration(min(-math.Log(u)*mu, ThinkTimeTruncation*mu))
}

// unitOpenZero returns a uniform value in (0, 1]: 53 random bits, plus
// one, over 2^53, so that ln never sees zero.
func (r *Rand) unitOpenZero() float64 {
	return float64(r.src.Uint64()>>11+1) / (1 << 53)
}

// ResponseTimePercentile is the percentile of the response-time
// constraints of TPC-C 5.2.5.7: at least 90% of the transactions of each
// type must complete within the type's limit.
const ResponseTimePercentile = 90

// responseTimeLimits are the 90th-percentile response-time constraints of
// TPC-C 5.2.5.7; Delivery's is that of its interactive part (the terminal
// is told the request was queued, 2.7.2).
var responseTimeLimits = [NumTxKinds]time.Duration{
	NewOrderTx:    5 * time.Second,
	PaymentTx:     5 * time.Second,
	OrderStatusTx: 5 * time.Second,
	DeliveryTx:    5 * time.Second,
	StockLevelTx:  20 * time.Second,
}

// ResponseTimeLimit returns kind's 90th-percentile response-time limit
// (TPC-C 5.2.5.7).
func ResponseTimeLimit(k TxKind) time.Duration { return responseTimeLimits[k] }

// DeferredDeliveryLimit bounds the deferred execution of Delivery (TPC-C
// 2.7.2, 5.2.5.7): 90% of the queued Delivery requests must complete within
// 80 seconds of being queued.
const DeferredDeliveryLimit = 80 * time.Second

// MixShare returns kind's share of the deck (TPC-C 5.2.4.2), in [0, 1].
func MixShare(k TxKind) float64 { return DeckPct(k) / 100 }

// MeanCycle is the mean time one terminal takes per transaction when the
// system answers at once: over the deck's mix, keying time plus the mean
// think time (TPC-C 5.2.5). Response times only lengthen the cycle.
func MeanCycle() time.Duration {
	var c float64
	for k := range NumTxKinds {
		c += MixShare(TxKind(k)) * float64(keyingTimes[k]+thinkTimeMeans[k])
	}
	return time.Duration(c)
}

// MaxNewOrdersPerMinute is the most New-Order transactions per minute that
// terminals can submit: each submits a New-Order for the deck's share of
// its cycles (10 of 23), one cycle every MeanCycle at best. For the ten
// terminals of a warehouse it is 10 × 10/23 × 60 s / 20.70 s = 12.61 per
// minute. The often-quoted 12.86 tpmC per warehouse is the same sum over
// the mix of exactly the 5.2.3 minimums (45% New-Order, cycle 20.99 s);
// the deck deals New-Order a little less than 45% (deck.go), so its
// ceiling is a little lower, and the efficiency a run reports is against
// the ceiling of the mix it actually dealt.
func MaxNewOrdersPerMinute(terminals int) float64 {
	return float64(terminals) * MixShare(NewOrderTx) * float64(time.Minute) / float64(MeanCycle())
}
