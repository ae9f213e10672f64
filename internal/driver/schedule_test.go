package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// eventLog records the schedule's calls with their times since the start
// of the synctest bubble's fake clock.
type eventLog struct {
	t0     time.Time
	events []string
	// onStop runs when stopStarting is called (to end the fake VUs).
	onStop func()
}

func (l *eventLog) at(now time.Time, what string) {
	l.events = append(l.events, fmt.Sprintf("%s@%s", what, now.Sub(l.t0)))
}

func (l *eventLog) startWindow(now time.Time)          { l.at(now, "start") }
func (l *eventLog) second(now time.Time)               { l.at(now, "second") }
func (l *eventLog) live(now time.Time, p Phase)        { l.at(now, "live:"+p.String()) }
func (l *eventLog) endWindow(now time.Time, full bool) { l.at(now, fmt.Sprintf("end:%v", full)) }
func (l *eventLog) stopStarting() {
	l.at(time.Now(), "stop")
	if l.onStop != nil {
		l.onStop()
	}
}
func (l *eventLog) abandon() { l.at(time.Now(), "abandon") }

func TestSchedule(t *testing.T) {
	const never = time.Hour
	for _, c := range []struct {
		name                    string
		rampup, duration, grace time.Duration
		liveEvery               time.Duration
		cancelAt                time.Duration // 0: never
		vusEndAt                time.Duration // 0: never; relative to the start
		vusEndAfterStop         time.Duration // >0: VUs end this long after stopStarting
		want                    string
		wantOutcome             outcome
	}{
		{
			name:   "complete window, in-flight transactions abandoned after grace",
			rampup: 2 * time.Second, duration: 3500 * time.Millisecond, grace: time.Second, liveEvery: never,
			want:        "start@2s second@3s second@4s second@5s end:true@5.5s stop@5.5s abandon@6.5s",
			wantOutcome: completed,
		},
		{
			name:   "virtual users finish within the grace period",
			rampup: time.Second, duration: 1500 * time.Millisecond, grace: 10 * time.Second, liveEvery: never,
			vusEndAfterStop: 200 * time.Millisecond,
			want:            "start@1s second@2s end:true@2.5s stop@2.5s abandon@2.7s",
			wantOutcome:     completed,
		},
		{
			name:   "no ramp-up",
			rampup: 0, duration: 1500 * time.Millisecond, grace: 0, liveEvery: never,
			want:        "start@0s second@1s end:true@1.5s stop@1.5s abandon@1.5s",
			wantOutcome: completed,
		},
		{
			name:   "live reports in every phase",
			rampup: 500 * time.Millisecond, duration: 2200 * time.Millisecond, grace: time.Second, liveEvery: time.Second,
			want:        "start@500ms live:measure@1s second@1.5s live:measure@2s second@2.5s end:true@2.7s stop@2.7s live:grace@3s abandon@3.7s",
			wantOutcome: completed,
		},
		{
			name:   "canceled in the measured window",
			rampup: time.Second, duration: 5 * time.Second, grace: time.Second, liveEvery: never,
			cancelAt:    2500 * time.Millisecond,
			want:        "start@1s second@2s end:false@2.5s stop@2.5s abandon@2.5s",
			wantOutcome: interrupted,
		},
		{
			name:   "canceled in ramp-up",
			rampup: 2 * time.Second, duration: 5 * time.Second, grace: time.Second, liveEvery: never,
			cancelAt:    time.Second,
			want:        "stop@1s abandon@1s",
			wantOutcome: interrupted,
		},
		{
			name:   "virtual users fail in the measured window",
			rampup: time.Second, duration: 5 * time.Second, grace: time.Second, liveEvery: never,
			vusEndAt:    1700 * time.Millisecond,
			want:        "start@1s end:false@1.7s stop@1.7s abandon@1.7s",
			wantOutcome: vusEnded,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				log := &eventLog{t0: time.Now()}
				vusDone := make(chan struct{})
				if c.cancelAt > 0 {
					time.AfterFunc(c.cancelAt, cancel)
				}
				if c.vusEndAt > 0 {
					time.AfterFunc(c.vusEndAt, func() { close(vusDone) })
				}
				if c.vusEndAfterStop > 0 {
					log.onStop = func() { time.AfterFunc(c.vusEndAfterStop, func() { close(vusDone) }) }
				}
				s := schedule{clk: realClock{}, rampup: c.rampup, duration: c.duration, grace: c.grace, liveEvery: c.liveEvery}
				got := s.run(ctx, vusDone, log)
				if got != c.wantOutcome {
					t.Errorf("outcome: got %d, want %d", got, c.wantOutcome)
				}
				if got := strings.Join(log.events, " "); got != c.want {
					t.Errorf("events:\n got  %s\n want %s", got, c.want)
				}
			})
		})
	}
}

func TestLagMeter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := lagMeter{clk: realClock{}}
		l.start()
		time.Sleep(time.Second + lagEvery/2)
		l.end()
		// In a bubble nothing is late: ten ticks, no lag.
		if got, want := l.n, int64(10); got != want {
			t.Errorf("ticks: got %d, want %d", got, want)
		}
		if got := l.maxMillis(); got != 0 {
			t.Errorf("max lag in a bubble: got %v ms, want 0", got)
		}
		l.end() // a second end is harmless
	})
}

// TestSynchronisedWindows: runs that reach the barrier at different
// times (their sessions took 1 s and 3 s to open) ramp up from the same
// release instant and measure the same window, to the nanosecond of the
// bubble's clock, even when starting one window takes longer (its start
// counters took 400 ms to read).
func TestSynchronisedWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		t0 := time.Now()
		b := NewBarrier(2)
		logs := []*eventLog{{t0: t0}, {t0: t0}}
		slowStart := []time.Duration{0, 400 * time.Millisecond}
		open := []time.Duration{time.Second, 3 * time.Second}
		var wg sync.WaitGroup
		for i, l := range logs {
			wg.Go(func() {
				time.Sleep(open[i])
				released, err := b.arrive(ctx, time.Now())
				if err != nil {
					t.Errorf("run %d: arrive: %v", i, err)
					return
				}
				vusDone := make(chan struct{})
				l.onStop = func() { close(vusDone) }
				s := schedule{clk: realClock{}, rampup: 2 * time.Second, duration: 4500 * time.Millisecond, grace: time.Second,
					liveEvery: time.Hour, at: released.Add(2 * time.Second)}
				s.run(ctx, vusDone, &slowWindowStart{eventLog: l, delay: slowStart[i]})
			})
		}
		wg.Wait()
		if got, want := b.Released().Sub(t0), 3*time.Second; got != want {
			t.Errorf("released at %s, want %s (the last arrival)", got, want)
		}
		want := []string{
			"start@5s second@6s second@7s second@8s second@9s end:true@9.5s stop@9.5s abandon@9.5s",
			"start@5.4s second@6.4s second@7.4s second@8.4s second@9.4s end:true@9.5s stop@9.5s abandon@9.5s",
		}
		for i, l := range logs {
			if got := strings.Join(l.events, " "); got != want[i] {
				t.Errorf("run %d events:\n got  %s\n want %s", i, got, want[i])
			}
		}
	})
}

// slowWindowStart is an eventLog whose window start takes delay (the
// start counters read slowly) and is logged when it ends, as the driver
// records its window's start once its counters are read.
type slowWindowStart struct {
	*eventLog
	delay time.Duration
}

func (s *slowWindowStart) startWindow(time.Time) {
	time.Sleep(s.delay)
	s.at(time.Now(), "start")
}

// TestBarrierBroken: a party that gives up (its sessions did not open)
// or is interrupted releases the others with ErrBarrierBroken; a
// barrier that released its parties stays released.
func TestBarrierBroken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBarrier(3)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := b.arrive(context.Background(), time.Now())
				errs <- err
			}()
		}
		synctest.Wait()
		b.Abort()
		for range 2 {
			if err := <-errs; !errors.Is(err, ErrBarrierBroken) {
				t.Errorf("waiting party: got %v, want ErrBarrierBroken", err)
			}
		}
		if _, err := b.arrive(context.Background(), time.Now()); !errors.Is(err, ErrBarrierBroken) {
			t.Errorf("late party: got %v, want ErrBarrierBroken", err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		b = NewBarrier(2)
		go func() {
			_, err := b.arrive(ctx, time.Now())
			errs <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted party: got %v, want context.Canceled", err)
		}
		if _, err := b.arrive(context.Background(), time.Now()); !errors.Is(err, ErrBarrierBroken) {
			t.Errorf("party after an interrupted one: got %v, want ErrBarrierBroken", err)
		}

		b = NewBarrier(1)
		waited := make(chan time.Time, 1)
		go func() {
			at, err := b.Wait(context.Background())
			if err != nil {
				t.Errorf("Wait: %v", err)
			}
			waited <- at
		}()
		synctest.Wait()
		at, err := b.arrive(context.Background(), time.Now())
		if w := <-waited; !w.Equal(at) {
			t.Errorf("Wait returned %v, want the release instant %v", w, at)
		}
		if err != nil || !at.Equal(b.Released()) {
			t.Errorf("single party: got %v, %v; want the release instant %v", at, err, b.Released())
		}
		b.Abort()
		if b.Released().IsZero() {
			t.Errorf("abort after release cleared the release")
		}
	})
}
