package results

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/store"
	"github.com/oltplab/oltplab/internal/summary"
)

// MonitorByRef finds the monitor result a user named: a number is a
// result id, anything else a label (its newest monitor). found is false
// when nothing of that name is a monitor.
func MonitorByRef(ctx context.Context, st *store.Store, ref string) (store.Run, bool, error) {
	return RunByRef(ctx, st, store.KindMonitor, "monitor", ref)
}

// RunByRef finds the result of kind a user named: a number is a result
// id, anything else a label (its newest result of that kind). found is
// false when nothing of that name is of the kind; what names the kind in
// an error.
func RunByRef(ctx context.Context, st *store.Store, kind store.Kind, what, ref string) (store.Run, bool, error) {
	ref = strings.TrimSpace(ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		r, err := st.GetRun(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return store.Run{}, false, storeErr("find the "+what+" "+ref, err)
		case r.Kind == kind:
			return r, true, nil
		}
	}
	rs, err := st.ListRuns(ctx, store.RunFilter{Kind: kind, Label: ref, Limit: 1})
	if err != nil {
		return store.Run{}, false, storeErr("find the "+what+" "+ref, err)
	}
	if len(rs) == 0 {
		return store.Run{}, false, nil
	}
	return rs[0], true, nil
}

// Monitor turns a stored monitor into the report model: its averages and
// its per-second series.
func Monitor(ctx context.Context, st *store.Store, r store.Run) (report.Monitor, error) {
	m := report.Monitor{RunID: r.ID, Label: r.Label, Target: r.Target, Started: r.StartedAt,
		Partial: r.Status != store.StatusOK, Context: Flatten(r.Context)}
	if len(r.Summary) == 0 {
		return m, nil
	}
	sum, err := summary.DecodeMonitorRun(r.Summary)
	if err != nil {
		return m, storeErr(fmt.Sprintf("decode monitor %d", r.ID), err)
	}
	m.Seconds = sum.Seconds
	if sum.Monitor == nil {
		return m, nil
	}
	m.Figures = hostFigures([]*summary.Monitor{sum.Monitor})
	dev := ""
	if m.Figures != nil {
		dev = m.Figures.DataDevice
	}
	series, err := stepSeries(ctx, st, r.ID, 0, dev, seriesSource(m.Figures))
	if err != nil {
		return m, err
	}
	if series != nil {
		m.Points = series.Points
	}
	return m, nil
}

// LoadInputs resolves what report and export were asked for: each
// reference is a profile (label or id) or, failing that, a monitor result
// (label or result id). Naming none, an unknown name or a profile without
// a measured run gives a *RefError.
func LoadInputs(ctx context.Context, st *store.Store, refs []string, inc report.Include) ([]report.Profile, []report.Monitor, error) {
	if len(refs) == 0 {
		return nil, nil, &RefError{What: "profile or monitor", Err: errors.New("name at least one profile or monitor (a --label or an id; see `oltplab results list`)")}
	}
	var ps []report.Profile
	var ms []report.Monitor
	for _, ref := range refs {
		p, err := LoadProfile(ctx, st, ref, inc)
		if err == nil {
			if len(p.Steps) == 0 {
				return nil, nil, &RefError{What: "profile", Ref: ref, Err: errors.New("has no measured run")}
			}
			ps = append(ps, p)
			continue
		}
		r, found, merr := MonitorByRef(ctx, st, ref)
		if merr != nil {
			return nil, nil, merr
		}
		if !found {
			return nil, nil, &RefError{What: "profile or monitor", Ref: ref, Err: errors.New("names no profile and no monitor result (see `oltplab results list` and `oltplab results list --kind profile`)")}
		}
		m, err := Monitor(ctx, st, r)
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, m)
	}
	return ps, ms, nil
}
