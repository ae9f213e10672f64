package store

import "context"

// OpenDefault opens (creating if needed) the store at DefaultPath,
// creating the XDG data directory when that is where it lives, as the
// command line does with PrepareDefault and Open.
func OpenDefault(ctx context.Context, getenv func(string) string) (*Store, error) {
	path, err := PrepareDefault(getenv)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path)
}
