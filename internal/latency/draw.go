package latency

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// drawer draws the delays of one layer from one seeded random stream, so
// that a run can be repeated with the same delays in the same order of
// requests. Requests arrive on many goroutines: the stream is locked.
type drawer struct {
	delays [NumKinds]Delay
	zero   [NumKinds]bool
	mu     sync.Mutex
	rnd    *rand.Rand
}

func newDrawer(s Settings, seed uint64) *drawer {
	d := &drawer{rnd: rand.New(rand.NewPCG(seed, seed^0x6f6c74706c6162))}
	for _, k := range Kinds() {
		d.delays[k] = s.Delay(k)
		d.zero[k] = d.delays[k].IsZero()
	}
	return d
}

// draw is the delay of one operation of kind k.
func (d *drawer) draw(k Kind) time.Duration {
	if d.zero[k] {
		return 0
	}
	dl := &d.delays[k]
	if dl.Shape == Fixed && dl.TailPct == 0 && dl.Jitter.IsZero() {
		return dl.Center
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return dl.draw(d.rnd)
}

// draw draws one delay from r.
func (dl *Delay) draw(r *rand.Rand) time.Duration {
	var v float64
	switch {
	case dl.TailPct > 0 && r.Float64()*100 < dl.TailPct:
		v = float64(dl.Tail)
	case dl.Shape == Normal:
		sigma := float64(dl.P99-dl.Center) / z99
		// Truncated at 0: a few draws again, then 0.
		for range 8 {
			if v = float64(dl.Center) + sigma*r.NormFloat64(); v >= 0 {
				break
			}
		}
	case dl.Shape == LogNormal:
		sigma := math.Log(float64(dl.P99)/float64(dl.Center)) / z99
		v = float64(dl.Center) * math.Exp(sigma*r.NormFloat64())
	default:
		v = float64(dl.Center)
	}
	switch j := dl.Jitter; {
	case j.Abs > 0:
		v += (2*r.Float64() - 1) * float64(j.Abs)
	case j.Pct > 0:
		v += (2*r.Float64() - 1) * v * j.Pct / 100
	}
	return time.Duration(min(max(v, 0), float64(MaxDelay)))
}
