package driver

import "time"

// lagEvery is the period of the scheduling-lag probe.
const lagEvery = 100 * time.Millisecond

// lagMeter measures how late a 100 ms ticker is received: on a driver
// host with spare CPU the lag stays well under a millisecond; a driver
// starved of CPU (and so possibly the bottleneck) shows it here. It runs
// in its own goroutine between start and stop.
type lagMeter struct {
	clk  clock
	stop chan struct{}
	done chan struct{}

	// Written by the probe goroutine, read after stop returns.
	max, sum time.Duration
	n        int64
}

func (l *lagMeter) start() {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	c, stopTicker := l.clk.NewTicker(lagEvery)
	go func() {
		defer close(l.done)
		defer stopTicker()
		for {
			select {
			case <-l.stop:
				return
			case tick := <-c:
				lag := max(l.clk.Now().Sub(tick), 0)
				l.max = max(l.max, lag)
				l.sum += lag
				l.n++
			}
		}
	}()
}

// end stops the probe and waits for it; it may be called when start was not.
func (l *lagMeter) end() {
	if l.stop == nil {
		return
	}
	close(l.stop)
	<-l.done
	l.stop = nil
}

// maxMillis and meanMillis are valid after end.
func (l *lagMeter) maxMillis() float64 { return float64(l.max) / float64(time.Millisecond) }

func (l *lagMeter) meanMillis() float64 {
	if l.n == 0 {
		return 0
	}
	return float64(l.sum) / float64(l.n) / float64(time.Millisecond)
}
