package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oltplab/oltplab/internal/testenv"
)

// TestHelpGroups: `oltplab --help` lists the commands under headings, as
// a reader looks for them, each visible command once.
func TestHelpGroups(t *testing.T) {
	r := oltplab(t, []string{"HOME=/nonexistent"}, "--help")
	got := map[string][]string{}
	heading := ""
	seen := map[string]int{}
	for _, line := range strings.Split(r.out, "\n") {
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") && !strings.Contains(line, "Usage") {
			heading = strings.TrimSuffix(line, ":")
			continue
		}
		if f := strings.Fields(line); strings.HasPrefix(line, "  ") && len(f) > 1 && heading != "" {
			got[heading] = append(got[heading], f[0])
			seen[f[0]]++
		}
		if line == "" && heading != "" && len(got[heading]) > 0 {
			heading = ""
		}
	}
	want := map[string][]string{
		groupWorkload: {"quickstart", "build", "run", "check", "tpch"},
		groupInfra:    {"experiment", "instance", "storage", "backup", "rebuild", "cpu", "neighbours", "parallel"},
		groupResults:  {"results", "compare", "report", "cost", "serve"},
		groupScaleOut: {"agent", "k8s", "monitor"},
		groupTool:     {"selftest", "clean", "completion", "version"},
	}
	for g, cmds := range want {
		if !slices.Equal(got[g], cmds) {
			t.Errorf("under %q: got %v, want %v", g, got[g], cmds)
		}
	}
	for _, c := range commands() {
		if c.summary != "" && seen[c.name] != 1 {
			t.Errorf("command %s listed %d times, want once", c.name, seen[c.name])
		}
	}
}

// completionEnv runs oltplab with cmds (commands() and any a test adds).
func completionRun(t *testing.T, cmds []command, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := mainWith(context.Background(), args, []string{"HOME=/nonexistent"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, cmds)
	return result{code: code, out: out.String(), err: errb.String()}
}

// TestCompletionFromDefinitions: the completion scripts are made from the
// commands' own flag definitions: every flag each command's --help lists
// is in every script, and a command with a new flag, added to the table
// without touching the completion code, completes too.
func TestCompletionFromDefinitions(t *testing.T) {
	cmds := append(commands(), command{name: "frobnicate", summary: "a command the completion code never heard of",
		run: func(ctx context.Context, a *app, args []string) error {
			fs := newFlagSet("frobnicate")
			fs.Int("widget-count", 1, "`N` widgets")
			fs.String("widget-file", "", "read widgets from `FILE`")
			return helpOK(a.parseFlags(fs, "frobnicate", args))
		}})
	a := &app{commands: cmds}
	tree := a.completionTree(context.Background())
	flagRE := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)
	checked := 0
	for _, n := range leaves(tree) {
		if len(n.flags) == 0 {
			t.Errorf("%s: no flags described, want at least --help (does it parse with parseFlags?)", strings.Join(n.path, " "))
			continue
		}
		help := completionRun(t, cmds, append(slices.Clone(n.path), "--help")...)
		for _, m := range flagRE.FindAllStringSubmatch(help.out, -1) {
			checked++
			if !slices.ContainsFunc(n.flags, func(f completionFlag) bool { return f.long == m[1] }) {
				t.Errorf("%s: --help lists --%s, the completion has no such flag", strings.Join(n.path, " "), m[1])
			}
		}
	}
	if checked < 200 {
		t.Errorf("checked %d flags of the commands' help against the completions, want them all (200 and more)", checked)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := completionRun(t, cmds, "completion", shell)
		if r.code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, r.code, r.err)
		}
		for _, s := range []string{"frobnicate", "widget-count", "widget-file", "warehouses", "manifest", "shard-group"} {
			if !strings.Contains(r.out, s) {
				t.Errorf("completion %s lacks %q", shell, s)
			}
		}
	}
	if r := completionRun(t, cmds, "completion", "tcsh"); r.code != exitUsage || !strings.Contains(r.err, "want bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d, %q; want a usage error", r.code, r.err)
	}
}

// completionScript writes `oltplab completion SHELL` (with the test's
// extra command frobnicate) to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	cmds := append(commands(), command{name: "frobnicate", summary: "test", run: func(ctx context.Context, a *app, args []string) error {
		fs := newFlagSet("frobnicate")
		fs.String("widget-file", "", "read widgets from `FILE`")
		return helpOK(a.parseFlags(fs, "frobnicate", args))
	}})
	r := completionRun(t, cmds, "completion", shell)
	if r.code != 0 {
		t.Fatalf("completion %s: exit %d", shell, r.code)
	}
	file := filepath.Join(t.TempDir(), "oltplab."+shell)
	if err := os.WriteFile(file, []byte(r.out), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// completionCases are what a user types and what TAB must offer.
var completionCases = []struct {
	line string // up to the cursor
	want string // one of the completions
}{
	{"oltplab res", "results"},
	{"oltplab results l", "list"},
	{"oltplab build --wareh", "--warehouses"},
	{"oltplab results list --li", "--limit"},
	{"oltplab tpch b", "build"},
	{"oltplab completion f", "fish"},
	{"oltplab frobnicate --widget-f", "--widget-file"},
}

// TestBashCompletion: the bash script parses (bash -n) and, sourced in
// a bash process, completes commands, subcommands and flags through
// COMP_WORDS/COMP_CWORD as bash's completion calls it, and file names
// for a FILE flag.
func TestBashCompletion(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	file := completionScript(t, "bash")
	if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "widgets.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := append(completionCases, struct{ line, want string }{"oltplab frobnicate --widget-file " + dir + "/wid", dir + "/widgets.txt"})
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			words := strings.Fields(c.line)
			if strings.HasSuffix(c.line, " ") {
				words = append(words, "")
			}
			script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _oltplab; printf '%s\n' "${COMPREPLY[@]}"`
			out, err := exec.Command(bash, append([]string{"--norc", "-c", script, "bash", file}, words...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			if got := strings.Split(strings.TrimSpace(string(out)), "\n"); !slices.Contains(got, c.want) {
				t.Errorf("completing %q: got %q, want %q among them", c.line, got, c.want)
			}
		})
	}
}

// TestFishCompletion: the fish script parses and fish's own `complete
// -C` offers the commands, subcommands and flags.
func TestFishCompletion(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed here: the fish script is not checked")
	}
	file := completionScript(t, "fish")
	if out, err := exec.Command(fish, "--no-execute", file).CombinedOutput(); err != nil {
		t.Fatalf("fish --no-execute: %v\n%s", err, out)
	}
	for _, c := range completionCases {
		t.Run(c.line, func(t *testing.T) {
			cmd := exec.Command(fish, "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, file, c.line)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "rror") {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
			if !slices.Contains(got, c.want) {
				t.Errorf("completing %q: got %q, want %q among them", c.line, got, c.want)
			}
		})
	}
}

// zshDriver types a line, TAB and ^X into an interactive zsh on a
// pseudo-terminal (zsh/zpty) with compinit and the script loaded; ^X
// writes the edited line to file $3, which it waits for (up to 30 s)
// and prints.
const zshDriver = `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1=''; autoload -U compinit; compinit -u -D; source ${(q)1}"
zpty -w z "dump() { print -r -- \"\$BUFFER\" > ${(q)3} }; zle -N dump; bindkey '^X' dump"
zpty -n -w z "$2"$'\t\C-x'
for i in {1..300}; do [[ -s $3 ]] && break; sleep 0.1; done
zpty -d z
cat $3
`

// TestZshCompletion: the zsh script parses (zsh -n) and, in an
// interactive zsh with compinit, TAB completes a command, a subcommand
// and a flag.
func TestZshCompletion(t *testing.T) {
	testenv.Require(t, testenv.Subprocess)
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed here: the zsh script is not checked")
	}
	file := completionScript(t, "zsh")
	if out, err := exec.Command(zsh, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	for _, c := range []struct{ line, want string }{
		{"oltplab tp", "oltplab tpch"},
		{"oltplab results l", "oltplab results list"},
		{"oltplab build --wareh", "oltplab build --warehouses="},
		{"oltplab frobnicate --widget-f", "oltplab frobnicate --widget-file="},
	} {
		t.Run(c.line, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dir := t.TempDir()
			cmd := exec.CommandContext(ctx, zsh, "-f", "-c", zshDriver, "zsh", file, c.line, filepath.Join(dir, "line"))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("zsh: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != c.want {
				t.Errorf("completing %q: the line became %q, want %q", c.line, got, c.want)
			}
		})
	}
}
