package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/instance"
)

// The backup step beside the data (the agent's token only):
//
//	POST   /v1/instances/{id}/backups/prepare  BackupRequest (To, Method,
//	       Jobs) -> BackupInfo: the tools found, To made (claim.Within,
//	       below the agent's roots), how its backups are taken
//	POST   /v1/instances/{id}/backups          BackupRequest -> BackupTaken:
//	       one backup into To/Name, a new directory under claim's mark
//	DELETE /v1/instances/{id}/backups/{name}   remove that backup (its mark
//	       checked)
//	POST   /v1/instances/{id}/backups/{name}/restore  RestoreRequest ->
//	       RestoreTaken: that backup restored into Into, a new directory
//	       under claim's mark below the agent's roots, and a new managed
//	       instance of the agent started on it (its own id, lease and
//	       ticket), as a local backup step restores (internal/instance)
//
// The engine's tools run inside the instance's cgroups, as a local
// instance's backups (internal/instance). A backup not kept is removed
// when its runner asks, and otherwise when the instance stops (its
// runner gone, its lease lapsed, the agent stopping). A restored copy
// not kept is removed when its instance stops (its runner asks once the
// copy is checked, or the lease lapses, or the agent stops). The agent
// restores only a backup it took itself, under its own mark.

// BackupRequest is one backup of an instance, or the preparation of its
// backups (Name empty).
type BackupRequest struct {
	To     string                `json:"to"`
	Name   string                `json:"name,omitempty"`
	Method instance.BackupMethod `json:"method,omitempty"`
	Jobs   int                   `json:"jobs,omitempty"`
	// Keep leaves the backup when the instance stops.
	Keep bool `json:"keep,omitempty"`
	// RestoreDir, on preparation, is where restores will go: prepared
	// (and refused) as To is.
	RestoreDir string `json:"restore_dir,omitempty"`
}

// BackupTaken is a backup the agent took.
type BackupTaken struct {
	Backup instance.Backup `json:"backup"`
}

// backupNamePrefix starts every backup directory's name a runner asks
// for: a plain name in To, never a path.
const backupNamePrefix = "oltplab-backup-"

// heldBackup is a backup the agent took of an instance (or a restored
// copy of one): what it restores, and what it removes unless kept.
type heldBackup struct {
	dir    string
	mark   claim.Mark
	keep   bool
	backup instance.Backup
	jobs   int
}

func (is *instances) backupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/instances/{id}/backups/prepare", is.backupPrepare)
	mux.HandleFunc("POST /v1/instances/{id}/backups", is.backup)
	mux.HandleFunc("DELETE /v1/instances/{id}/backups/{name}", is.backupRemove)
	mux.HandleFunc("POST /v1/instances/{id}/backups/{name}/restore", is.restore)
}

// checkBackupDir refuses a directory for backups or restores outside the
// agent's roots, or in or above the instance's data directory.
func (is *instances) checkBackupDir(m *managed, field, dir string) (string, int, error) {
	if err := is.s.allowed(field, dir); err != nil {
		return "", http.StatusForbidden, err
	}
	dir = filepath.Clean(dir)
	for _, dd := range []string{m.inst.Spec().DataDir, m.inst.Spec().WALDir} {
		if dd == "" {
			continue
		}
		dd = filepath.Clean(dd)
		if dir == dd || strings.HasPrefix(dir, dd+"/") || strings.HasPrefix(dd, dir+"/") {
			return "", http.StatusBadRequest, fmt.Errorf("%s %s: not in or above the instance's directory %s", field, dir, dd)
		}
	}
	return dir, 0, nil
}

// backupper checks a request and prepares the instance's backupper.
func (is *instances) backupper(w http.ResponseWriter, r *http.Request) (*managed, *instance.Backupper, BackupRequest, bool) {
	var req BackupRequest
	if !admin(w, r) {
		return nil, nil, req, false
	}
	m := is.find(w, r)
	if m == nil {
		return nil, nil, req, false
	}
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("backup request: %w", err))
		return nil, nil, req, false
	}
	if req.To == "" {
		fail(w, http.StatusBadRequest, errors.New("backup request: the backup directory (to) is required"))
		return nil, nil, req, false
	}
	dirs := []string{}
	for _, d := range []struct {
		field string
		dir   *string
	}{{"backup directory (to)", &req.To}, {"restore directory", &req.RestoreDir}} {
		if *d.dir == "" {
			continue
		}
		clean, status, err := is.checkBackupDir(m, d.field, *d.dir)
		if err != nil {
			fail(w, status, err)
			return nil, nil, req, false
		}
		*d.dir = clean
		dirs = append(dirs, clean)
	}
	bk, err := instance.NewBackupper(r.Context(), instance.BackupSource{Instance: m.inst, Target: m.inst.Target()},
		instance.BackupOptions{Method: req.Method, Jobs: req.Jobs, Dirs: dirs}, is.s.log().With("instance", m.id))
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err)
		return nil, nil, req, false
	}
	if err := bk.PrepareDirs(dirs...); err != nil {
		_ = bk.Close()
		fail(w, http.StatusUnprocessableEntity, err)
		return nil, nil, req, false
	}
	return m, bk, req, true
}

func (is *instances) backupPrepare(w http.ResponseWriter, r *http.Request) {
	_, bk, _, ok := is.backupper(w, r)
	if !ok {
		return
	}
	info := bk.Info()
	_ = bk.Close()
	writeJSON(w, http.StatusOK, info)
}

func (is *instances) backup(w http.ResponseWriter, r *http.Request) {
	m, bk, req, ok := is.backupper(w, r)
	if !ok {
		return
	}
	defer bk.Close()
	if !strings.HasPrefix(req.Name, backupNamePrefix) || strings.ContainsAny(req.Name, `/\`) || req.Name != filepath.Base(req.Name) {
		fail(w, http.StatusBadRequest, fmt.Errorf("backup name %q: want a plain name starting %s", req.Name, backupNamePrefix))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(m.work, cancel)
	defer stop()
	dir := filepath.Join(req.To, req.Name)
	mark := claim.NewMark(claim.KindBackup)
	is.s.log().Info("agent: backup", "instance", m.id, "runner", m.runner, "method", bk.Method(), "dir", dir)
	taken, err := bk.Backup(ctx, dir, mark)
	if err != nil {
		// Backup removed what it made.
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	is.mu.Lock()
	if m.backups == nil {
		m.backups = map[string]heldBackup{}
	}
	m.backups[req.Name] = heldBackup{dir: taken.Dir, mark: mark, keep: req.Keep, backup: taken, jobs: req.Jobs}
	is.mu.Unlock()
	is.s.log().Info("agent: backup taken", "instance", m.id, "dir", taken.Dir, "bytes", taken.Bytes, "seconds", taken.Ended.Sub(taken.Started).Seconds())
	writeJSON(w, http.StatusOK, BackupTaken{Backup: taken})
}

func (is *instances) backupRemove(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	name := r.PathValue("name")
	is.mu.Lock()
	h, ok := m.backups[name]
	delete(m.backups, name)
	is.mu.Unlock()
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("no backup %q of this instance held by this agent", name))
		return
	}
	if h.keep {
		writeJSON(w, http.StatusOK, struct{}{}) // kept: forgotten, left in place
		return
	}
	if err := claim.Remove(h.dir, h.mark); err != nil {
		fail(w, http.StatusInternalServerError, fmt.Errorf("remove backup %s: %w", h.dir, err))
		return
	}
	is.s.log().Info("agent: backup removed", "instance", m.id, "dir", h.dir)
	writeJSON(w, http.StatusOK, struct{}{})
}

// removeBackups removes the backups of m that its runner did not (the
// instance stops).
func (is *instances) removeBackups(m *managed) {
	is.mu.Lock()
	held := m.backups
	m.backups = nil
	is.mu.Unlock()
	for _, h := range held {
		if h.keep {
			continue
		}
		err := claim.Remove(h.dir, h.mark)
		is.s.log().Info("agent: backup removed", "instance", m.id, "dir", h.dir, "why", "the instance stopped", "err", err)
	}
}

// BackupsPrepare asks the agent to prepare an instance's backups into
// req.To on its host; it returns how they are taken.
func (c Client) BackupsPrepare(ctx context.Context, id string, req BackupRequest) (instance.BackupperInfo, error) {
	var info instance.BackupperInfo
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+id+"/backups/prepare", req, &info, time.Minute)
	return info, err
}

// Backup asks the agent for one backup of the instance into
// req.To/req.Name on its host. An agent that goes away is ErrUnreachable.
func (c Client) Backup(ctx context.Context, id string, req BackupRequest) (instance.Backup, error) {
	var out BackupTaken
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+id+"/backups", req, &out, 0)
	var re *RemoteError
	if err != nil && !errors.As(err, &re) && ctx.Err() == nil && !errors.Is(err, ErrUnreachable) {
		err = fmt.Errorf("%w at %s during the backup: %w", ErrUnreachable, c.Addr, err)
	}
	return out.Backup, err
}

// RemoveBackup asks the agent to remove a backup it took.
func (c Client) RemoveBackup(ctx context.Context, id, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/instances/"+id+"/backups/"+name, nil, nil, time.Minute)
}
