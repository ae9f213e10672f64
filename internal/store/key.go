package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"
)

// A results store holds one random key (table store_keys, created with
// the store by migration 6) that tags every file a result is saved to
// when the store cannot take it (saved.go): an HMAC-SHA256 over the
// file's content. `results import` checks the tag before it reads
// anything into the store, so it takes only files an oltplab using this
// store wrote, unchanged; a file edited by hand, or a copy given a new
// run identity, is refused.
//
// The key is read when the store is opened for writing, at the start of
// the command and before anything is measured, and kept in memory: a
// result is saved to a file only for a run this process created in the
// store (CompleteDurably), so the store was reachable then and its key
// is at hand when the store later is not. A store that could never be
// opened has no run to save. The key is not a password: whoever can read
// the store can read it, and a copy or a restored backup of the store
// keeps it (a saved file imports into either). It never leaves the store
// except into this process's memory.

// savedKeyPurpose names the key of saved results in store_keys.
const savedKeyPurpose = "saved results"

// savedKeyBytes is the key's length: SHA-256's block size would do, and
// 32 random bytes are as strong as the hash.
const savedKeyBytes = 32

// createSavedKey stores a new random key in the migration that creates
// store_keys.
func createSavedKey(ctx context.Context, t *dbTx, now time.Time) error {
	key := make([]byte, savedKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("draw the key of saved results: %w", err)
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO store_keys (purpose, key, created_at) VALUES (?, ?, ?)`,
		savedKeyPurpose, key, formatTime(now)); err != nil {
		return fmt.Errorf("store the key of saved results: %w", err)
	}
	return nil
}

// readSavedKey reads the store's key of saved results.
func (s *Store) readSavedKey(ctx context.Context) error {
	var key []byte
	err := s.db.QueryRowContext(ctx, `SELECT key FROM store_keys WHERE purpose = ?`, savedKeyPurpose).Scan(&key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: the key of saved results is missing", ErrDamaged)
	case err != nil:
		return fmt.Errorf("read the key of saved results: %w", err)
	case len(key) != savedKeyBytes:
		return fmt.Errorf("%w: the key of saved results is %d bytes long, not %d", ErrDamaged, len(key), savedKeyBytes)
	}
	s.savedKey = key
	return nil
}

// savedMAC returns a new HMAC-SHA256 keyed with the store's key.
func (s *Store) savedMAC() hash.Hash { return hmac.New(sha256.New, s.savedKey) }

// savedKeyID names the key without revealing it (a hash of it): a file
// says which store's key tagged it, so that a file imported into another
// store is told apart from an altered one.
func (s *Store) savedKeyID() string {
	h := sha256.New()
	h.Write([]byte("oltplab saved results key id\x00"))
	h.Write(s.savedKey)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
