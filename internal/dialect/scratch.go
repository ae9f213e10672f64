package dialect

import "context"

// Scratcher is implemented by a Database that can make a scratch database
// of its own on the same server, for `oltplab selftest`: a user checks on
// their own server what oltplab's tests cannot reach, without touching any
// database of theirs.
//
// CreateScratch creates a new, empty database under a name no one uses,
// marks it as oltplab's (a mark a database gets only from CreateScratch)
// and returns a target for it, with the caller's credentials. DropScratch
// drops the database t names, and only when it carries the mark: a target
// that names anything else is refused with ErrNotScratch, nothing dropped.
// The caller closes every Database it opened on t first.
type Scratcher interface {
	CreateScratch(ctx context.Context) (Target, error)
	DropScratch(ctx context.Context, t Target) error
}

// ErrNotScratch: a database was to be dropped as a scratch database, but
// it does not carry CreateScratch's mark.
var ErrNotScratch = errorString("not a scratch database oltplab created: left as it is")

type errorString string

func (e errorString) Error() string { return string(e) }
