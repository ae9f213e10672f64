package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
	"github.com/oltplab/oltplab/internal/instance"
)

// RestoreRequest restores one of an instance's backups (the name in the
// path) into Into: a new directory below the agent's roots, its name a
// plain one starting oltplab-backup- (the runner's cycle names).
type RestoreRequest struct {
	Into string `json:"into"`
	// Keep leaves the restored copy when its instance stops.
	Keep bool `json:"keep,omitempty"`
	// Runner names the plan's runner, for the log.
	Runner string `json:"runner,omitempty"`
}

// RestoreTaken is a restored copy running as a managed instance of the
// agent: Instance holds its password and ticket (on this answer only),
// Report the restore's steps and size, measured on the agent's host.
type RestoreTaken struct {
	Instance InstanceInfo           `json:"instance"`
	Report   instance.RestoreReport `json:"report"`
}

// restore brings a backup the agent took up as a new managed instance,
// as a local backup step restores: the engine's tools inside the source
// instance's cgroups, the restored server with the source's controls.
func (is *instances) restore(w http.ResponseWriter, r *http.Request) {
	if !admin(w, r) {
		return
	}
	m := is.find(w, r)
	if m == nil {
		return
	}
	var req RestoreRequest
	if err := decodeStrict(r, &req); err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("restore request: %w", err))
		return
	}
	name := r.PathValue("name")
	is.mu.Lock()
	held, ok := m.backups[name]
	is.mu.Unlock()
	if !ok {
		fail(w, http.StatusNotFound, fmt.Errorf("no backup %q of this instance held by this agent", name))
		return
	}
	if req.Into == "" {
		fail(w, http.StatusBadRequest, errors.New("restore request: the restore directory (into) is required"))
		return
	}
	into, status, err := is.checkBackupDir(m, "restore directory", req.Into)
	if err != nil {
		fail(w, status, err)
		return
	}
	if base := filepath.Base(into); !strings.HasPrefix(base, backupNamePrefix) {
		fail(w, http.StatusBadRequest, fmt.Errorf("restore directory %s: want a name starting %s", into, backupNamePrefix))
		return
	}
	if bd := filepath.Clean(held.dir); into == bd || strings.HasPrefix(into, bd+"/") || strings.HasPrefix(bd, into+"/") {
		fail(w, http.StatusBadRequest, fmt.Errorf("restore directory %s: not in or above the backup %s", into, bd))
		return
	}
	// A new directory only: the agent marks (and later removes) nothing
	// it did not create.
	if _, err := os.Lstat(into); !errors.Is(err, fs.ErrNotExist) {
		fail(w, http.StatusConflict, fmt.Errorf("restore directory %s already exists: want a new one", into))
		return
	}
	log := is.s.log().With("instance", m.id, "runner", m.runner)
	bk, err := instance.NewBackupper(r.Context(), instance.BackupSource{Instance: m.inst, Target: m.inst.Target()},
		instance.BackupOptions{Method: held.backup.Method, Jobs: held.jobs, Dirs: []string{filepath.Dir(held.dir), filepath.Dir(into)}}, log)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	defer bk.Close()
	if err := bk.PrepareDirs(filepath.Dir(into)); err != nil {
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	// The restored instance outlives the request (its runner checks it,
	// then stops it); the runner gone during the restore, or the source
	// instance stopping, aborts it.
	life, end := context.WithCancel(context.WithoutCancel(r.Context()))
	stopReq := context.AfterFunc(r.Context(), end)
	stopWork := context.AfterFunc(m.work, end)
	mark := claim.NewMark(claim.KindRestore)
	log.Info("agent: restore", "backup", held.dir, "into", into, "method", held.backup.Method)
	inst, rep, err := bk.Restore(life, held.backup, into, mark)
	stopReq()
	stopWork()
	if err == nil && life.Err() != nil {
		_ = inst.Stop(context.WithoutCancel(r.Context()))
		err = fmt.Errorf("restore: %w", life.Err())
	}
	if err != nil {
		end()
		if !req.Keep {
			if rerr := claim.Remove(into, mark); rerr != nil {
				log.Warn("agent: remove a failed restore", "dir", into, "err", rerr)
			}
		}
		fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	rm := &managed{id: inst.Describe().ID, runner: req.Runner, ticket: rand.Text() + rand.Text(), inst: inst, end: end,
		expires: time.Now().Add(is.lease()), restored: &heldBackup{dir: into, mark: mark, keep: req.Keep}}
	if rm.runner == "" {
		rm.runner = m.runner
	}
	rm.work, rm.endWork = context.WithCancel(life)
	is.mu.Lock()
	is.m[rm.id] = rm
	is.mu.Unlock()
	log.Info("agent: restored", "id", rm.id, "into", into, "bytes", rep.Bytes, "steps", len(rep.Steps))
	info := is.info(rm)
	info.Password, info.Ticket = inst.Target().Password.Reveal(), rm.ticket
	writeJSON(w, http.StatusCreated, RestoreTaken{Instance: info, Report: rep})
}

// removeRestored removes a restored copy its instance ran on, unless
// kept (the instance stopped).
func (is *instances) removeRestored(m *managed) {
	h := m.restored
	if h == nil || h.keep {
		return
	}
	err := claim.Remove(h.dir, h.mark)
	is.s.log().Info("agent: restored copy removed", "instance", m.id, "dir", h.dir, "err", err)
}

// Restore asks the agent to restore the instance's backup name into
// req.Into on its host and start a managed instance on it: the answer's
// instance holds its password and ticket (secrets). Stop it (Stop) when
// done; its lease is the caller's to keep (KeepLease).
func (c Client) Restore(ctx context.Context, id, name string, req RestoreRequest) (RestoreTaken, error) {
	var out RestoreTaken
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+id+"/backups/"+name+"/restore", req, &out, 0)
	var re *RemoteError
	if err != nil && !errors.As(err, &re) && ctx.Err() == nil && !errors.Is(err, ErrUnreachable) {
		err = fmt.Errorf("%w at %s during the restore: %w", ErrUnreachable, c.Addr, err)
	}
	return out, err
}
