package driver

import (
	"context"
	"fmt"
	"strings"
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
