package cli

import (
	"errors"
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

// isSaved reports whether err says a finished result could not be stored
// and was saved to a file instead (store.SavedError): what was measured
// is still printed.
func isSaved(err error) bool {
	var saved *store.SavedError
	return errors.As(err, &saved)
}
