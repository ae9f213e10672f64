package sampler

import (
	"context"
	"time"

	"github.com/oltplab/oltplab/internal/dialect"
	"github.com/oltplab/oltplab/internal/store"
)

// DB series (source "db"), one sample per Interval at its end:
//
//	db_active_sessions{class}  average number of sessions in that wait class
//	                           over the interval's wait samples (non-idle classes;
//	                           the sum is the average active sessions, "DB time
//	                           per second")
//	db_idle_sessions           average number of idle sessions (not DB time)
//	db_wait_event_sessions{ev} average number of non-idle sessions on that engine event
//	db_wait_samples            number of wait samples taken in the interval
//	db_<counter>_per_s         per-second rate of each cumulative DBCounters value
//	db_avg_wait_ms{label}      Δtime/Δcount of a dialect.AvgWait pair, when Δcount > 0
//	db_wait_events_per_s{label} Δcount per second of that pair
func (s *Sampler) dbLoop(ctx context.Context, ws dialect.WaitSampler) {
	defer s.wg.Done()
	meter := lockCPUMeter()
	defer meter.release()
	defer func() { s.addCPU(meter.lap()) }()

	every := max(1, int(s.opts.Interval/s.opts.WaitInterval))
	timeout := s.opts.Interval
	tick := time.NewTicker(s.opts.WaitInterval)
	defer tick.Stop()

	var (
		probe   dialect.WaitProbe
		failing bool
		n       int
		classes [16]int
		events  = map[string]int{}
		prevCtr map[string]float64
		prevAt  time.Time
		ticks   int
	)
	fail := func(doing string, err error) {
		if !failing {
			s.warn(doing, err) // once per streak
		}
		failing = true
		if probe != nil {
			_ = probe.Close() // its connection may be mid-query: open a new one
			probe = nil
		}
		prevCtr = nil
	}
	defer func() {
		if probe != nil {
			_ = probe.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if probe == nil {
			if ticks%every != 0 {
				ticks++
				continue // retry opening once per Interval
			}
			octx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p, err := ws.OpenWaitProbe(octx)
			cancel()
			s.countStatements(1) // the probe reads the server's version and settings
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				fail("open wait probe", err)
				ticks++
				continue
			}
			probe = p
			s.mu.Lock()
			s.source = p.WaitSource()
			s.mu.Unlock()
		}
		ticks++

		qctx, cancel := context.WithTimeout(ctx, timeout)
		samples, err := probe.SampleWaits(qctx)
		cancel()
		s.countStatements(1)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fail("sample waits", err)
			continue
		}
		n++
		for _, w := range samples {
			if int(w.Class) >= 0 && int(w.Class) < len(classes) {
				classes[w.Class]++
			}
			if w.Class != dialect.WaitIdle && w.Event != "" {
				events[w.Event]++
			}
		}
		if ticks%every != 0 {
			continue
		}

		// End of an Interval: wait averages, then counters.
		now := time.Now()
		var batch []timed
		put := func(metric, device string, v float64) {
			batch = append(batch, timed{at: now, s: store.Sample{Source: store.SourceDB, Metric: metric, Device: device, Value: v}})
		}
		put(MetricDBWaitSamples, "", float64(n))
		for _, c := range dialect.WaitClasses() {
			if classes[c] == 0 {
				continue
			}
			if c == dialect.WaitIdle {
				put(MetricDBIdleSessions, "", float64(classes[c])/float64(n))
			} else {
				put(MetricDBActiveSessions, c.String(), float64(classes[c])/float64(n))
			}
		}
		for ev, k := range events {
			put(MetricDBWaitEventSessions, ev, float64(k)/float64(n))
		}
		n, classes = 0, [16]int{}
		clear(events)

		qctx, cancel = context.WithTimeout(ctx, timeout)
		cur, err := probe.DBCounters(qctx)
		cancel()
		s.countStatements(1)
		if err != nil {
			s.addBatch(batch)
			if ctx.Err() != nil {
				return
			}
			fail("read database counters", err)
			continue
		}
		failing = false
		if prevCtr != nil {
			dt := now.Sub(prevAt).Seconds()
			for k, v := range cur {
				p, ok := prevCtr[k]
				if !ok || v < p || dt <= 0 {
					continue // new, reset (pg_stat_reset) or no time: skip the interval
				}
				put(MetricDBCounterPerS(k), "", (v-p)/dt)
			}
			for _, a := range probe.AvgWaits() {
				t1, ok1 := cur[a.TimeCounter]
				t0, ok2 := prevCtr[a.TimeCounter]
				c1, ok3 := cur[a.CountCounter]
				c0, ok4 := prevCtr[a.CountCounter]
				if !ok1 || !ok2 || !ok3 || !ok4 || t1 < t0 || c1 <= c0 || dt <= 0 {
					continue
				}
				put(MetricDBAvgWaitMillis, a.Label, (t1-t0)/(c1-c0))
				put(MetricDBWaitEventsPerS, a.Label, (c1-c0)/dt)
			}
		}
		prevCtr, prevAt = cur, now
		s.addBatch(batch)
	}
}
