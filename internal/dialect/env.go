package dialect

import "log/slog"

// Env is what a dialect takes from the process that opens it, passed in
// with the Target by the caller (the CLI) instead of read from globals: a
// dialect reads no environment variable of its own and logs through no
// default logger. The zero Env has no variables and discards logs.
type Env struct {
	// Getenv looks up an environment variable in the caller's copy of the
	// environment (MYSQL_PWD, USER); nil has none.
	Getenv func(key string) string
	// Logger receives the dialect's diagnostics; nil discards them.
	Logger *slog.Logger
	// PlainSockets makes sessions use their sockets as dialed instead of
	// with raw-syscall reads and writes (package rawconn), to measure what
	// rawconn saves (OLTPLAB_RAWCONN=off, make bench).
	PlainSockets bool
}

// Lookup returns the value of the environment variable key, or "".
func (e Env) Lookup(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// Log returns the logger, one that discards when none was given.
func (e Env) Log() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}
