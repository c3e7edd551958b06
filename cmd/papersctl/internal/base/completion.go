package base

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Completion is papersctl completion.
var Completion = &Command{Name: "completion", Summary: "print a shell completion script (bash, zsh or fish)",
	Synopsis: "bash|zsh|fish",
	About: "Prints a script that completes papersctl's commands, flags and flag values, made from the\n" +
		"same command and flag table the parser uses. Install it with e.g.\n" +
		"  papersctl completion bash > ~/.local/share/bash-completion/completions/papersctl\n" +
		"  papersctl completion zsh > \"${fpath[1]}/_papersctl\"\n" +
		"  papersctl completion fish > ~/.config/fish/completions/papersctl.fish",
	Args: Positional{Synopsis: "bash|zsh|fish", Min: 1, Max: 1, Choices: []string{"bash", "zsh", "fish"}},
	New:  func() Runner { return completionCmd{} }}

type completionCmd struct{}

func (completionCmd) Define(*FlagSet)                {}
func (completionCmd) Check(*FlagSet, []string) error { return nil }
func (completionCmd) Run(e *Env, args []string) error {
	m := CompletionModel()
	switch args[0] {
	case "bash":
		writeBash(e.Stdout, m)
	case "zsh":
		// zsh runs the bash function through its bash-completion layer:
		// one script, one behaviour.
		fmt.Fprint(e.Stdout, "#compdef papersctl\n# zsh completion for papersctl (papersctl completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBash(e.Stdout, m)
	case "fish":
		writeFish(e.Stdout, m)
	}
	return nil
}

// CompCommand is one command as the completion sees it.
type CompCommand struct {
	Path  string // "selftest", "emu serve"
	About string
	Subs  []string
	Flags []CompFlag
	Args  Positional
}

type CompFlag struct {
	Name    string
	Usage   string
	Valued  bool
	Choices []string
	Files   string
}

// CompletionModel reads every command's flags from the definitions the
// parser uses.
func CompletionModel() []CompCommand {
	var out []CompCommand
	var walk func(list []*Command, prefix string)
	walk = func(list []*Command, prefix string) {
		for _, n := range Names(list) {
			c := Lookup(list, n)
			cc := CompCommand{Path: prefix + c.Name, About: c.Summary, Subs: Names(c.Subs), Args: c.Args}
			if c.Subs != nil {
				out = append(out, cc)
				walk(c.Subs, cc.Path+" ")
				continue
			}
			f := NewFlagSet("papersctl " + cc.Path)
			c.New().Define(f)
			f.fs.VisitAll(func(fl *flag.Flag) {
				v := f.lookup(fl.Name)
				if !v.hidden {
					cc.Flags = append(cc.Flags, CompFlag{Name: fl.Name, Usage: fl.Usage, Valued: v.typ != "", Choices: v.choices, Files: v.files})
				}
			})
			out = append(out, cc)
		}
	}
	walk(Commands, "")
	return out
}

// GuestCommands are the commands hil runs in its machines.
func GuestCommands() []string {
	var s []string
	for _, c := range Commands {
		if c.Guest {
			s = append(s, c.Name)
		}
	}
	slices.Sort(s)
	return s
}

func writeBash(w io.Writer, m []CompCommand) {
	top := writeBashCommands(w, m)
	writeBashFlags(w, m)
	writeBashPositional(w, m, top)
	writeBashValues(w, m)
}

// writeBashCommands starts _papersctl, the completion function: the
// commands, and the subcommands of those that have them. It returns the
// top-level commands.
func writeBashCommands(w io.Writer, m []CompCommand) (top []string) {
	var withSubs []string
	for _, c := range m {
		if !strings.Contains(c.Path, " ") {
			top = append(top, c.Path)
		}
		if c.Subs != nil {
			withSubs = append(withSubs, c.Path)
		}
	}
	fmt.Fprintf(w, `# bash completion for papersctl (papersctl completion bash), generated from its flag table
_papersctl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "%s --help --version" -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]} start=2
    case "$cmd" in
    %s)
        if ((COMP_CWORD == 2)); then
            case "$cmd" in
`, strings.Join(top, " "), orPattern(withSubs))
	for _, c := range m {
		if c.Subs != nil {
			fmt.Fprintf(w, "            %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.Path, strings.Join(c.Subs, " "))
		}
	}
	return top
}

// writeBashFlags continues it with each command's flags and their values,
// up to the command's positional words.
func writeBashFlags(w io.Writer, m []CompCommand) {
	fmt.Fprint(w, `            esac
            return
        fi
        cmd="$cmd ${COMP_WORDS[2]}" start=3 ;;
    esac
    # After --, or after the first word that is not a flag or a flag's value,
    # come the command's positional words.
    local i pos=-1 w
    for ((i = start; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]]; then pos=$((i + 1)); break; fi
        if [[ $w != -* ]] && ! _papersctl_valued "$cmd" "${COMP_WORDS[i-1]}"; then pos=$i; break; fi
    done
    if ((pos < 0)); then
        if _papersctl_valued "$cmd" "$prev"; then
            _papersctl_value "$cmd" "$prev"
            return
        fi
        if [[ $cur == -* || -z $cur ]]; then
            case "$cmd" in
`)
	for _, c := range m {
		if c.Subs == nil {
			var fl []string
			for _, f := range c.Flags {
				fl = append(fl, Dashed(f.Name))
			}
			fmt.Fprintf(w, "            %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.Path, strings.Join(fl, " "))
		}
	}
	fmt.Fprint(w, `            esac
            [[ $cur == -* ]] && return
        fi
        pos=$COMP_CWORD
    fi
`)
}

// writeBashPositional ends it with each command's positional words.
func writeBashPositional(w io.Writer, m []CompCommand, top []string) {
	fmt.Fprint(w, `    # The positional words.
    case "$cmd" in
`)
	for _, c := range m {
		switch {
		case c.Args.Choices != nil:
			fmt.Fprintf(w, "    %q) COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.Path, strings.Join(c.Args.Choices, " "))
		case c.Args.Complete == "commands":
			fmt.Fprintf(w, "    %q) COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.Path, strings.Join(top, " "))
		case c.Args.Complete == "guest": // hil: the papersctl command the machines run
			fmt.Fprintf(w, "    %q) ((COMP_CWORD == pos)) && COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.Path, strings.Join(GuestCommands(), " "))
		case c.Args.Complete == "files":
			fmt.Fprintf(w, "    %q) compopt -o default 2>/dev/null; COMPREPLY+=($(compgen -f -- \"$cur\")) ;;\n", c.Path)
		}
	}
	fmt.Fprint(w, `    esac
}
`)
}

// writeBashValues writes the helpers that know which flags take a value
// and complete it, and registers the function.
func writeBashValues(w io.Writer, m []CompCommand) {
	fmt.Fprint(w, `
# _papersctl_valued CMD FLAG: does FLAG (-name or --name) take a value?
_papersctl_valued() {
    local f=${2#-}
    case "$1:${f#-}" in
`)
	var valued []string
	for _, c := range m {
		for _, f := range c.Flags {
			if f.Valued {
				valued = append(valued, fmt.Sprintf("%q", c.Path+":"+f.Name))
			}
		}
	}
	fmt.Fprintf(w, "    %s) return 0 ;;\n", strings.Join(valued, "|"))
	fmt.Fprint(w, `    esac
    return 1
}

# _papersctl_value CMD FLAG: complete FLAG's value.
_papersctl_value() {
    local f=${2#-}
    case "$1:${f#-}" in
`)
	for _, c := range m {
		for _, f := range c.Flags {
			key := fmt.Sprintf("%q", c.Path+":"+f.Name)
			switch {
			case f.Choices != nil:
				fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", key, strings.Join(f.Choices, " "))
			case f.Files == "dir":
				fmt.Fprintf(w, "    %s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n", key)
			case f.Files == "file":
				fmt.Fprintf(w, "    %s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n", key)
			}
		}
	}
	fmt.Fprint(w, `    esac
}
complete -F _papersctl papersctl
`)
}

// orPattern is a bash case pattern matching any of words ("" matches none).
func orPattern(words []string) string {
	if len(words) == 0 {
		return `""`
	}
	q := make([]string, len(words))
	for i, s := range words {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, "|")
}

func writeFish(w io.Writer, m []CompCommand) {
	fmt.Fprint(w, "# fish completion for papersctl (papersctl completion fish), generated from its flag table\ncomplete -c papersctl -f\n")
	fmt.Fprint(w, "complete -c papersctl -n __fish_use_subcommand -l help -d 'show the commands'\n")
	fmt.Fprint(w, "complete -c papersctl -n __fish_use_subcommand -l version -d 'print the version'\n")
	for _, c := range m {
		parts := strings.Fields(c.Path)
		cond := "__fish_use_subcommand"
		if len(parts) == 2 {
			cond = "__fish_seen_subcommand_from " + parts[0]
		}
		fmt.Fprintf(w, "complete -c papersctl -n %s -a %s -d %s\n", fishQuote(cond), parts[len(parts)-1], fishQuote(c.About))
		if c.Subs != nil {
			continue
		}
		in := "__fish_seen_subcommand_from " + parts[len(parts)-1]
		if len(parts) == 2 {
			in = "__fish_seen_subcommand_from " + parts[0] + "; and __fish_seen_subcommand_from " + parts[1]
		}
		for _, f := range c.Flags {
			opt := "-l" // --name
			if !strings.HasPrefix(Dashed(f.Name), "--") {
				opt = "-o" // -n, -np: fish's old-style option
			}
			fmt.Fprintf(w, "complete -c papersctl -n %s %s %s", fishQuote(in), opt, f.Name)
			switch {
			case f.Choices != nil:
				fmt.Fprintf(w, " -x -a %s", fishQuote(strings.Join(f.Choices, " ")))
			case f.Files != "":
				fmt.Fprint(w, " -r -F")
			case f.Valued:
				fmt.Fprint(w, " -x")
			}
			fmt.Fprintf(w, " -d %s\n", fishQuote(firstLine(f.Usage)))
		}
		switch {
		case c.Args.Choices != nil:
			fmt.Fprintf(w, "complete -c papersctl -n %s -a %s\n", fishQuote(in), fishQuote(strings.Join(c.Args.Choices, " ")))
		case c.Args.Complete == "files":
			fmt.Fprintf(w, "complete -c papersctl -n %s -F\n", fishQuote(in))
		}
	}
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
