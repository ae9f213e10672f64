package site

import (
	"bytes"
	"net/url"
	"strings"
)

// bytesBuffer holds a page until it is complete, so an error is never
// sent after half a page.
type bytesBuffer = bytes.Buffer

func pathEscape(s string) string  { return url.PathEscape(s) }
func queryEscape(s string) string { return url.QueryEscape(s) }

// fileName keeps letters, digits, dots, dashes and underscores of s, for
// a download's name.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// indexHTML lists what the store holds. Every value is escaped by
// html/template (labels, targets and errors are user text).
const indexHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>oltplab results</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #666; }
form { margin: .5em 0 1.5em; }
</style>
</head>
<body>
<header>
<h1>oltplab results</h1>
<p class="note">Store {{.StorePath}} · oltplab {{.Version}} · read-only</p>
</header>
<main>
<section id="compare">
<h2>Compare two profiles</h2>
{{if .Profiles}}<form id="compare-form" method="get" action="/compare">
<label>baseline <select name="a" id="compare-a">{{range .Profiles}}<option value="{{ref .}}">{{.ID}} {{.Label}}{{with shard .}} ({{.}}){{end}}</option>{{end}}</select></label>
<label>against <select name="b" id="compare-b">{{range .Profiles}}<option value="{{ref .}}">{{.ID}} {{.Label}}{{with shard .}} ({{.}}){{end}}</option>{{end}}</select></label>
<button type="submit">compare</button>
</form>{{else}}<p class="note">No profile stored yet (oltplab run --label NAME ...).</p>{{end}}
</section>
<section id="profiles">
<h2>Profiles</h2>
<table>
<thead><tr><th>ID</th><th>label</th><th>sharded run</th><th>status</th><th>created</th><th>ended</th><th>experiment</th><th>downloads</th></tr></thead>
<tbody>
{{range .Profiles}}<tr><td class="num">{{.ID}}</td><td><a href="/profiles/{{.ID}}">{{if .Label}}{{.Label}}{{else}}(no label){{end}}</a></td><td>{{shard .}}</td><td>{{.Status}}</td><td>{{when .CreatedAt}}</td><td>{{when .EndedAt}}</td><td>{{if .ExperimentID}}{{.ExperimentID}}{{end}}</td><td><a href="/profiles/{{.ID}}/report.csv">CSV</a> <a href="/profiles/{{.ID}}/report.json">JSON</a></td></tr>
{{end}}</tbody>
</table>
</section>
<section id="experiments">
<h2>Experiments</h2>
<table>
<thead><tr><th>ID</th><th>name</th><th>status</th><th>created</th><th>ended</th></tr></thead>
<tbody>
{{range .Experiments}}<tr><td class="num">{{.ID}}</td><td>{{if $.HasReports}}<a href="/experiments/{{.ID}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Status}}</td><td>{{when .CreatedAt}}</td><td>{{when .EndedAt}}</td></tr>
{{end}}</tbody>
</table>
</section>
<section id="runs">
<h2>Results</h2>
<p class="note">The newest {{.RunLimit}}: builds, runs, checks, monitors, storage benchmarks.</p>
<table>
<thead><tr><th>ID</th><th>kind</th><th>label</th><th>status</th><th>profile</th><th>step</th><th>VUs</th><th>target</th><th>started</th><th>JSON</th></tr></thead>
<tbody>
{{range .Runs}}<tr><td class="num">{{.ID}}</td><td>{{.Kind}}</td><td>{{.Label}}</td><td>{{.Status}}{{if .Superseded}} (superseded){{end}}</td><td class="num">{{if .ProfileID}}<a href="/profiles/{{.ProfileID}}">{{.ProfileID}}</a>{{end}}</td><td class="num">{{if .Step}}{{.Step}}.{{.Repeat}}{{end}}</td><td class="num">{{if .VUs}}{{.VUs}}{{end}}</td><td>{{.Target}}</td><td>{{when .StartedAt}}</td><td><a href="/runs/{{.ID}}">JSON</a></td></tr>
{{end}}</tbody>
</table>
</section>
</main>
</body>
</html>
`
