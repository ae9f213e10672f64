package site

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/oltplab/oltplab/internal/report"
	"github.com/oltplab/oltplab/internal/results"
	"github.com/oltplab/oltplab/internal/store"
)

// Server is the results browser over one store.
type Server struct {
	Store *store.Store
	// ExperimentReport reads experiment id into the report model
	// (experiment.Report); nil hides experiments' reports.
	ExperimentReport func(ctx context.Context, st *store.Store, id int64, inc report.Include) (report.Input, error)
	// Token, when not empty, is required on every request.
	Token   string
	Version string
	Log     *slog.Logger
	// ListLimit bounds the runs the index lists (newest first).
	ListLimit int
}

// Handler returns the application with its access checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /profiles/{ref}", s.profile)
	mux.HandleFunc("GET /profiles/{ref}/report.csv", s.profileDownload("csv"))
	mux.HandleFunc("GET /profiles/{ref}/report.json", s.profileDownload("json"))
	mux.HandleFunc("GET /compare", s.compare)
	mux.HandleFunc("GET /experiments/{id}", s.experiment)
	mux.HandleFunc("GET /experiments/{id}/report.json", s.experimentJSON)
	mux.HandleFunc("GET /runs/{id}", s.runJSON)
	return newAccess(mux, s.Token)
}

// writers of the downloads and pages, by format.
var writers = map[string]func(io.Writer, report.Input) error{
	"html": report.HTML, "csv": report.CSV, "json": report.JSON,
}

var contentTypes = map[string]string{
	"html": "text/html; charset=utf-8", "csv": "text/csv; charset=utf-8", "json": "application/json",
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	s.profiles(w, r, []string{ref}, "html", "", []report.Link{
		{Text: "all results", Href: "/"},
		{Text: "CSV", Href: "/profiles/" + pathEscape(ref) + "/report.csv"},
		{Text: "JSON", Href: "/profiles/" + pathEscape(ref) + "/report.json"},
	})
}

func (s *Server) profileDownload(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.profiles(w, r, []string{r.PathValue("ref")}, format, "", nil)
	}
}

// compare shows profiles a and b (labels or ids) in one report, b's
// ratios taken against a; format=csv or json downloads it.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, b := q.Get("a"), q.Get("b")
	if a == "" || b == "" {
		http.Error(w, "compare: give two profiles, ?a=LABEL-OR-ID&b=LABEL-OR-ID", http.StatusBadRequest)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = "html"
	}
	base := "/compare?a=" + queryEscape(a) + "&b=" + queryEscape(b)
	s.profiles(w, r, []string{a, b}, format, "", []report.Link{
		{Text: "all results", Href: "/"},
		{Text: "CSV", Href: base + "&format=csv"},
		{Text: "JSON", Href: base + "&format=json"},
	})
}

// profiles renders refs as the report does.
func (s *Server) profiles(w http.ResponseWriter, r *http.Request, refs []string, format, title string, links []report.Link) {
	if _, ok := writers[format]; !ok {
		http.Error(w, "unknown format (want html, csv or json)", http.StatusBadRequest)
		return
	}
	ps, ms, err := results.LoadInputs(r.Context(), s.Store, refs, includeOf(r))
	if err != nil {
		s.fail(w, err)
		return
	}
	if title == "" && len(ps) == 2 {
		title = fmt.Sprintf("%s compared with %s", profileName(ps[1]), profileName(ps[0]))
	}
	in := report.Input{Title: title, Generated: time.Now().UTC(), Version: s.Version, Profiles: ps, Monitors: ms}
	if format == "html" {
		in.Links = links
	}
	s.render(w, format, in, refs[0])
}

// includeOf is which runs the request counts beyond the ok ones:
// ?suspect=include, ?contaminated=include.
func includeOf(r *http.Request) report.Include {
	q := r.URL.Query()
	return report.Include{Suspect: q.Get("suspect") == "include", Contaminated: q.Get("contaminated") == "include"}
}

// profileName is how a page title names p: its label, or its id.
func profileName(p report.Profile) string {
	if p.Label != "" {
		return fmt.Sprintf("%s (%d)", p.Label, p.ID)
	}
	return fmt.Sprintf("profile %d", p.ID)
}

func (s *Server) experiment(w http.ResponseWriter, r *http.Request) {
	s.experimentAs(w, r, "html")
}

func (s *Server) experimentJSON(w http.ResponseWriter, r *http.Request) {
	s.experimentAs(w, r, "json")
}

func (s *Server) experimentAs(w http.ResponseWriter, r *http.Request, format string) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 || s.ExperimentReport == nil {
		http.NotFound(w, r)
		return
	}
	in, err := s.ExperimentReport(r.Context(), s.Store, id, includeOf(r))
	if err != nil {
		s.fail(w, err)
		return
	}
	in.Generated, in.Version = time.Now().UTC(), s.Version
	if format == "html" {
		in.Links = []report.Link{{Text: "all results", Href: "/"}, {Text: "JSON", Href: fmt.Sprintf("/experiments/%d/report.json", id)}}
	}
	s.render(w, format, in, fmt.Sprintf("experiment-%d", id))
}

// render writes in as format; a download is named after name.
func (s *Server) render(w http.ResponseWriter, format string, in report.Input, name string) {
	var buf bytesBuffer
	if err := writers[format](&buf, in); err != nil {
		if errors.Is(err, report.ErrMixedCSV) {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", contentTypes[format])
	if format != "html" {
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "oltplab-"+fileName(name)+"."+format))
	}
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) runJSON(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		http.NotFound(w, r)
		return
	}
	run, err := s.Store.GetRun(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", contentTypes["json"])
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(run)
}

// fail answers 404 for what the user named wrongly and 500 otherwise,
// logging the latter.
func (s *Server) fail(w http.ResponseWriter, err error) {
	var re *results.RefError
	if errors.As(err, &re) || errors.Is(err, store.ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if s.Log != nil {
		s.Log.Error("serve", "err", err)
	}
	http.Error(w, "cannot read the results store: "+err.Error(), http.StatusInternalServerError)
}

// indexPage is what the index shows.
type indexPage struct {
	Version     string
	StorePath   string
	Profiles    []store.Profile
	Experiments []store.Experiment
	Runs        []store.Run
	HasReports  bool
	RunLimit    int
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	limit := s.ListLimit
	if limit <= 0 {
		limit = 200
	}
	page := indexPage{Version: s.Version, StorePath: s.Store.Path(), HasReports: s.ExperimentReport != nil, RunLimit: limit}
	var err error
	if page.Profiles, err = s.Store.ListProfiles(ctx, store.ProfileFilter{}); err != nil {
		s.fail(w, err)
		return
	}
	if page.Experiments, err = s.Store.ListExperiments(ctx, 0); err != nil {
		s.fail(w, err)
		return
	}
	if page.Runs, err = s.Store.ListRuns(ctx, store.RunFilter{Limit: limit}); err != nil {
		s.fail(w, err)
		return
	}
	var buf bytesBuffer
	if err := indexTemplate.Execute(&buf, page); err != nil {
		s.fail(w, err)
		return
	}
	// The index has no script: none may run, nothing loads from elsewhere.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", contentTypes["html"])
	_, _ = w.Write(buf.Bytes())
}

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"ref":   func(p store.Profile) string { return strconv.FormatInt(p.ID, 10) },
	"shard": shardOf,
}).Parse(indexHTML))

// shardOf says what p is in a sharded run (oltplab run --shard): one
// shard's own profile, or the shards' merge; "" for any other profile.
// The shards and their merge share a label: this tells them apart.
func shardOf(p store.Profile) string {
	var params struct {
		Shard  string  `json:"shard"`
		Group  string  `json:"shard_group"`
		Merged []int64 `json:"merged_from_profiles"`
	}
	if json.Unmarshal(p.Params, &params) != nil {
		return ""
	}
	if len(params.Merged) > 0 {
		var ids []string
		for _, id := range params.Merged {
			if id != 0 { // a shard that stored nothing
				ids = append(ids, strconv.FormatInt(id, 10))
			}
		}
		if len(ids) == len(params.Merged) {
			return fmt.Sprintf("merged from %d shards (profiles %s)", len(ids), strings.Join(ids, ", "))
		}
		return fmt.Sprintf("merged from %d of %d shards (profiles %s)", len(ids), len(params.Merged), strings.Join(ids, ", "))
	}
	if params.Shard != "" {
		s := "shard " + params.Shard
		if params.Group != "" {
			s += " of " + params.Group
		}
		return s + ": this shard's part only"
	}
	return ""
}
