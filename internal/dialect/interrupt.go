package dialect

// Interrupter is implemented by sessions that can be stopped from another
// goroutine without a context: Interrupt makes the call in flight, if any,
// and every later call of the session fail promptly (typically by expiring
// the connection's deadline), after which the session can only be closed.
// It is safe to call concurrently with the session's own calls, and more
// than once.
//
// Watching a cancellable context costs a driver some work on every call;
// the run driver passes an Interrupter's calls a context that is never
// canceled and calls Interrupt instead when it abandons in-flight
// transactions (grace period over, Ctrl-C, failed virtual user).
type Interrupter interface {
	Interrupt()
}
