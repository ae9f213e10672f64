package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Registry is a directory of the instances running on this host for
// manual work (`oltplab instance start|list|stop`): one JSON file per
// instance, written by the process that runs it and removed when it stops.
// An entry whose process is gone is stale.
type Registry struct{ Dir string }

// Entry is one running instance in a Registry.
type Entry struct {
	Name         string      `json:"name"`
	Engine       Engine      `json:"engine"`
	OwnerPID     int         `json:"owner_pid"`   // the oltplab process running it
	OwnerStart   uint64      `json:"owner_start"` // its start time, to tell a reused pid
	ServerPID    int         `json:"server_pid"`
	Target       string      `json:"target"` // without the password
	PasswordFile string      `json:"password_file"`
	Started      time.Time   `json:"started"`
	Description  Description `json:"description"`
	// Stale is set by List and Get when the owner process is gone.
	Stale bool `json:"-"`
}

// ErrNameInUse is returned by Add for a name a live instance holds.
var ErrNameInUse = errors.New("instance name in use")

// ErrNotRegistered is returned by Get for an unknown name.
var ErrNotRegistered = errors.New("no such instance")

// StateDir is oltplab's state directory, where the registry of running
// instances lives: $XDG_STATE_HOME/oltplab, else
// $HOME/.local/state/oltplab (the XDG base directories, as the results
// store's $XDG_DATA_HOME/oltplab). It may not exist yet.
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "oltplab"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("$XDG_STATE_HOME or home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "oltplab"), nil
}

// HasEntries reports whether the registry's directory lists instances
// (an entry's file, live or stale; another program's JSON files are not).
func (r Registry) HasEntries() bool {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return false
	}
	for _, de := range entries {
		if name, ok := strings.CutSuffix(de.Name(), ".json"); ok && de.Type().IsRegular() {
			if _, err := r.Get(name); err == nil {
				return true
			}
		}
	}
	return false
}

func (r Registry) file(name string) string { return filepath.Join(r.Dir, name+".json") }

// PasswordFile is where the instance's password is kept (mode 0600).
func (r Registry) PasswordFile(name string) string { return filepath.Join(r.Dir, name+".password") }

// Reserve claims name for the calling process before its instance
// starts, so that two processes never run instances of one name. A stale
// entry of that name is replaced.
func (r Registry) Reserve(name string) error {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return fmt.Errorf("instance registry %s: %w", r.Dir, err)
	}
	e := Entry{Name: name, OwnerPID: os.Getpid(), OwnerStart: selfStart()}
	for try := 0; try < 2; try++ {
		f, err := os.OpenFile(r.file(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			err = json.NewEncoder(f).Encode(e)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("instance registry: %w", err)
		}
		old, gerr := r.Get(name)
		if gerr == nil && !old.Stale {
			return fmt.Errorf("%w: %s runs in process %d", ErrNameInUse, name, old.OwnerPID)
		}
		r.Remove(name)
	}
	return fmt.Errorf("%w: %s", ErrNameInUse, name)
}

// Update rewrites the calling process's entry.
func (r Registry) Update(e Entry) error {
	e.OwnerPID, e.OwnerStart = os.Getpid(), selfStart()
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.file(e.Name) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("instance registry: %w", err)
	}
	return os.Rename(tmp, r.file(e.Name))
}

// Remove deletes an entry and its password file.
func (r Registry) Remove(name string) {
	_ = os.Remove(r.file(name))
	_ = os.Remove(r.PasswordFile(name))
}

// Get reads one entry.
func (r Registry) Get(name string) (Entry, error) {
	b, err := os.ReadFile(r.file(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, fmt.Errorf("%w: %s", ErrNotRegistered, name)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("instance registry: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Entry{}, fmt.Errorf("instance registry: entry %s: %w", name, err)
	}
	if e.Name != name || e.OwnerPID <= 0 {
		// Another program's file: not an instance of oltplab's.
		return Entry{}, fmt.Errorf("instance registry: %s is not an entry of oltplab's", r.file(name))
	}
	e.Stale = !ownerAlive(e.OwnerPID, e.OwnerStart)
	return e, nil
}

// List reads every entry, sorted by name.
func (r Registry) List() ([]Entry, error) {
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("instance registry: %w", err)
	}
	var out []Entry
	for _, de := range entries {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok {
			continue
		}
		if e, err := r.Get(name); err == nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// Alive reports whether the entry's owner process still runs.
func (e Entry) Alive() bool { return ownerAlive(e.OwnerPID, e.OwnerStart) }

func ownerAlive(pid int, start uint64) bool {
	if !alive(pid) {
		return false
	}
	p, err := readProcStat(pid)
	return err == nil && (start == 0 || p.StartTime == start)
}

func selfStart() uint64 {
	p, err := readProcStat(os.Getpid())
	if err != nil {
		return 0
	}
	return p.StartTime
}
