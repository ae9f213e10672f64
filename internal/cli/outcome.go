package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oltplab/oltplab/internal/store"
)

// storeWaitEnv says how long a finished measurement waits for a results
// store that another process holds locked before it is left in a file for
// `oltplab results import` (a Go duration; default store.DefaultMaxWait).
const storeWaitEnv = "OLTPLAB_STORE_WAIT"

// storeWait is the wait storeWaitEnv asks for; a bad value is bad input,
// found before anything is measured (openStore).
func (a *app) storeWait() (time.Duration, error) {
	v := a.env[storeWaitEnv]
	if v == "" {
		return store.DefaultMaxWait, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErrorf("%s=%s is not a positive duration (such as 30m)", storeWaitEnv, quoted(v))
	}
	return d, nil
}

// storeOutcome stores what a command measured without ever losing it:
// a busy store is retried (with a message) for up to storeWait, and a
// store that cannot take it leaves it in a file next to the store, whose
// path the error gives with the command that loads it. Callers print the
// result before calling it.
func (a *app) storeOutcome(ctx context.Context, st *store.Store, id int64, o store.Outcome) error {
	wait, err := a.storeWait()
	if err != nil {
		wait = store.DefaultMaxWait // checked at open; never lose a result over it
	}
	ew := a.errw()
	err = st.CompleteDurably(context.WithoutCancel(ctx), id, o, store.Durability{
		MaxWait: wait,
		// SQLite's own wait for the lock within one attempt: short, so the
		// user hears of a locked store within seconds.
		AttemptWait: min(max(wait/10, 50*time.Millisecond), 2*time.Second),
		Notify:      func(msg string) { fmt.Fprintf(ew, "oltplab: %s\n", msg) },
	})
	if err != nil {
		var se *store.SavedError
		if errors.As(err, &se) {
			return withCode(exitStore, err)
		}
		return withCode(exitStore, fmt.Errorf("record the result of run %d: %w", id, err))
	}
	return nil
}
