package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

const completionSynopsis = `completion bash|zsh|fish

Prints a script that completes oltplab's commands, subcommands and flags in
your shell (file names where a flag takes a FILE, DIR or PATH). It is made
from the commands' own flag definitions: a new flag completes without
editing it. Load it for this shell, or save it where your shell looks:
  bash: source <(oltplab completion bash)
        oltplab completion bash > ~/.local/share/bash-completion/completions/oltplab
  zsh:  source <(oltplab completion zsh)
        oltplab completion zsh > "${fpath[1]}/_oltplab"   (then restart zsh)
  fish: oltplab completion fish | source
        oltplab completion fish > ~/.config/fish/completions/oltplab.fish`

func completionCommands() []command {
	shell := func(name string, write func(io.Writer, []completionNode) error) command {
		return command{name: name, summary: "the " + name + " completion script", run: func(ctx context.Context, a *app, args []string) error {
			fs := newFlagSet("completion " + name)
			if err := a.parseFlags(fs, completionSynopsis, args); err != nil {
				return helpOK(err)
			}
			return write(a.out(), a.completionTree(ctx))
		}}
	}
	return []command{shell("bash", writeBashCompletion), shell("zsh", writeZshCompletion), shell("fish", writeFishCompletion)}
}

func runCompletion(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usageErrorf("completion: want a shell: bash, zsh or fish (see `oltplab completion --help`)")
	}
	if c, ok := findCommand(completionCommands(), args[0]); ok {
		return c.run(ctx, a, args[1:])
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintf(a.stdio.Out, "Usage: oltplab %s\n", completionSynopsis)
		return nil
	}
	return usageErrorf("completion: unknown shell %s (want bash, zsh or fish)", quoted(args[0]))
}

// completionNode is a command or subcommand as a completion script offers
// it: its words, its flags, its subcommands.
type completionNode struct {
	path    []string // "results", "list"
	summary string
	flags   []completionFlag
	subs    []completionNode
}

// completionFlag is one flag of a command.
type completionFlag struct {
	long, short string
	usage       string // its help's first clause
	value       string // the value's name in the help (FILE, N); "" for a switch
	files, dirs bool   // the value names a file or a directory
}

// completionTree describes every visible command of a's table, the
// flags each parses and its subcommands, by running each with --help in a
// describing app (describeCommand): the definitions the commands parse
// with are the ones completed.
func (a *app) completionTree(ctx context.Context) []completionNode {
	var out []completionNode
	for _, c := range a.commands {
		if c.summary != "" {
			out = append(out, a.describeCommand(ctx, nil, c))
		}
	}
	return out
}

func (a *app) describeCommand(ctx context.Context, parent []string, c command) completionNode {
	n := completionNode{path: append(slices.Clone(parent), c.name), summary: c.summary}
	for _, s := range c.subs {
		n.subs = append(n.subs, a.describeCommand(ctx, n.path, s))
	}
	if len(c.subs) > 0 {
		return n // its flags are its subcommands'
	}
	var fs *pflag.FlagSet
	d := &app{stdio: Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, env: Env{},
		log: slog.New(slog.DiscardHandler), commands: a.commands, noCrossCheck: true,
		describe: func(f *pflag.FlagSet) {
			if fs == nil {
				fs = f
			}
		}}
	_ = c.run(ctx, d, []string{"--help"})
	if fs == nil {
		return n
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		cf := completionFlag{long: f.Name, short: f.Shorthand}
		name, usage := pflag.UnquoteUsage(f)
		if f.NoOptDefVal == "" && f.Value.Type() != "bool" {
			cf.value = cmpOr(name, "VALUE")
			cf.files = strings.Contains(cf.value, "FILE") || strings.Contains(cf.value, "PATH") || strings.Contains(cf.value, "PLAN")
			cf.dirs = strings.Contains(cf.value, "DIR")
		}
		cf.usage = firstClause(usage)
		n.flags = append(n.flags, cf)
	})
	return n
}

func cmpOr(s, def string) string {
	if s == "" || s == "value" {
		return def
	}
	return strings.ToUpper(s)
}

// firstClause is a flag's help up to its first "; " or " (", at most 80
// characters, on one line.
func firstClause(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, sep := range []string{"; ", " (", ": "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// leaves are n and its descendants that take flags (no subcommands).
func leaves(ns []completionNode) []completionNode {
	var out []completionNode
	for _, n := range ns {
		if len(n.subs) > 0 {
			out = append(out, leaves(n.subs)...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

func names(ns []completionNode) string {
	var w []string
	for _, n := range ns {
		w = append(w, n.path[len(n.path)-1])
	}
	return strings.Join(w, " ")
}

const completionHeader = "oltplab completion %s: made by `oltplab completion %s` (oltplab %s) from its commands' definitions."

// writeBashCompletion writes the bash script: the command at word 1, a
// subcommand at word 2 when the command has some, then the flags of that
// (sub)command, file names for FILE/PATH/DIR values and arguments.
func writeBashCompletion(w io.Writer, tree []completionNode) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# "+completionHeader+"\n", "bash", "bash", version())
	b.WriteString(`# Load it with: source <(oltplab completion bash)
_oltplab() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmdpath=${COMP_WORDS[1]} flags="" valued="" files="" dirs=""
    COMPREPLY=()
    if (( COMP_CWORD == 1 )); then
`)
	fmt.Fprintf(&b, "        mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\")\n        return\n    fi\n", shellQuote(names(tree)))
	b.WriteString("    case $cmdpath in\n")
	for _, n := range tree {
		if len(n.subs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s)\n        if (( COMP_CWORD == 2 )); then\n", n.path[0])
		fmt.Fprintf(&b, "            mapfile -t COMPREPLY < <(compgen -W %s -- \"$cur\")\n            return\n        fi\n", shellQuote(names(n.subs)))
		b.WriteString("        cmdpath=\"$cmdpath ${COMP_WORDS[2]}\" ;;\n")
	}
	b.WriteString("    esac\n    case $cmdpath in\n")
	for _, n := range leaves(tree) {
		var flags, valued, files, dirs []string
		for _, f := range n.flags {
			words := []string{"--" + f.long}
			if f.short != "" {
				words = append(words, "-"+f.short)
			}
			flags = append(flags, words...)
			if f.value != "" {
				valued = append(valued, words...)
			}
			if f.files {
				files = append(files, words...)
			}
			if f.dirs {
				dirs = append(dirs, words...)
			}
		}
		fmt.Fprintf(&b, "    %s)\n        flags=%s\n        valued=%s\n        files=%s\n        dirs=%s ;;\n",
			shellQuote(strings.Join(n.path, " ")), shellQuote(strings.Join(flags, " ")), shellQuote(strings.Join(valued, " ")),
			shellQuote(strings.Join(files, " ")), shellQuote(strings.Join(dirs, " ")))
	}
	b.WriteString(`    esac
    # The value of a flag: a file, a directory, or nothing to guess.
    if [[ -n $prev && " $valued " == *" $prev "* ]]; then
        if [[ " $dirs " == *" $prev "* ]]; then
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        elif [[ " $files " == *" $prev "* ]]; then
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _oltplab oltplab
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeZshCompletion writes the zsh script: _describe for the commands
// and subcommands with their summaries, _arguments for each one's flags.
func writeZshCompletion(w io.Writer, tree []completionNode) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef oltplab\n# "+completionHeader+"\n", "zsh", "zsh", version())
	b.WriteString(`_oltplab() {
    local -a entries
    if (( CURRENT == 2 )); then
        entries=(
`)
	for _, n := range tree {
		fmt.Fprintf(&b, "            %s\n", shellQuote(zshDescribe(n)))
	}
	b.WriteString(`        )
        _describe -t commands 'oltplab command' entries
        return
    fi
    local cmdpath=$words[2]
    case $cmdpath in
`)
	for _, n := range tree {
		if len(n.subs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s)\n        if (( CURRENT == 3 )); then\n            entries=(\n", n.path[0])
		for _, s := range n.subs {
			fmt.Fprintf(&b, "                %s\n", shellQuote(zshDescribe(s)))
		}
		fmt.Fprintf(&b, "            )\n            _describe -t commands %s entries\n            return\n        fi\n",
			shellQuote("oltplab "+n.path[0]+" subcommand"))
		b.WriteString("        cmdpath=\"$cmdpath $words[3]\"\n        shift words\n        (( CURRENT-- )) ;;\n")
	}
	b.WriteString("    esac\n    shift words\n    (( CURRENT-- ))\n    case $cmdpath in\n")
	for _, n := range leaves(tree) {
		fmt.Fprintf(&b, "    %s)\n        _arguments -s", shellQuote(strings.Join(n.path, " ")))
		for _, f := range n.flags {
			for _, spec := range zshFlagSpecs(f) {
				fmt.Fprintf(&b, " \\\n            %s", shellQuote(spec))
			}
		}
		b.WriteString(" \\\n            '*:file:_files' ;;\n")
	}
	b.WriteString("    esac\n}\n\nif [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n    _oltplab \"$@\"\nelse\n    compdef _oltplab oltplab\nfi\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// zshDescribe is a _describe entry, NAME:SUMMARY.
func zshDescribe(n completionNode) string {
	return n.path[len(n.path)-1] + ":" + firstClause(n.summary)
}

// zshFlagSpecs are _arguments specs of f: --long=[help]:VALUE:action,
// -s+[help]:VALUE:action; a switch without the value.
func zshFlagSpecs(f completionFlag) []string {
	help := "[" + zshEscape(f.usage) + "]"
	value := ""
	if f.value != "" {
		action := ""
		switch {
		case f.dirs:
			action = "_files -/"
		case f.files:
			action = "_files"
		}
		value = ":" + strings.ReplaceAll(f.value, ":", "") + ":" + action
	}
	var out []string
	if f.value != "" {
		// Flags with values may be repeatable (--on, --fio-option):
		// offer them again.
		out = append(out, "*--"+f.long+"="+help+value)
		if f.short != "" {
			out = append(out, "*-"+f.short+"+"+help+value)
		}
		return out
	}
	out = append(out, "--"+f.long+help)
	if f.short != "" {
		out = append(out, "-"+f.short+help)
	}
	return out
}

// zshEscape makes s safe inside an _arguments [description].
func zshEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

// writeFishCompletion writes the fish script: one complete line per
// command, subcommand and flag, conditioned on the words before it.
func writeFishCompletion(w io.Writer, tree []completionNode) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# "+completionHeader+"\n", "fish", "fish", version())
	b.WriteString(`# Load it with: oltplab completion fish | source

# __oltplab_at WORD...: the command line starts with oltplab WORD...
function __oltplab_at
    set -l words (commandline -opc)
    test (count $words) -gt (count $argv); or return 1
    for i in (seq (count $argv))
        set -l j (math $i + 1)
        test "$words[$j]" = "$argv[$i]"; or return 1
    end
end

# __oltplab_exactly WORD...: the words before the cursor are oltplab WORD...
function __oltplab_exactly
    set -l words (commandline -opc)
    test (count $words) -eq (math (count $argv) + 1); and __oltplab_at $argv
end

complete -c oltplab -e
`)
	var walk func(ns []completionNode)
	walk = func(ns []completionNode) {
		for _, n := range ns {
			parent := strings.Join(n.path[:len(n.path)-1], " ")
			fmt.Fprintf(&b, "complete -c oltplab -f -n %s -a %s -d %s\n", fishQuote(strings.TrimSpace("__oltplab_exactly "+parent)),
				fishQuote(n.path[len(n.path)-1]), fishQuote(firstClause(n.summary)))
			if len(n.subs) > 0 {
				walk(n.subs)
				continue
			}
			cond := fishQuote("__oltplab_at " + strings.Join(n.path, " "))
			for _, f := range n.flags {
				fmt.Fprintf(&b, "complete -c oltplab -n %s -l %s", cond, f.long)
				if f.short != "" {
					fmt.Fprintf(&b, " -s %s", f.short)
				}
				switch {
				case f.dirs:
					b.WriteString(" -x -a '(__fish_complete_directories)'")
				case f.files:
					b.WriteString(" -r -F")
				case f.value != "":
					b.WriteString(" -x")
				}
				fmt.Fprintf(&b, " -d %s\n", fishQuote(f.usage))
			}
		}
	}
	walk(tree)
	_, err := io.WriteString(w, b.String())
	return err
}

// shellQuote quotes s for bash and zsh: in single quotes, each single
// quote in s closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish: in single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
