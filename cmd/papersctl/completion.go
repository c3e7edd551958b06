package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

func init() {
	Register(&Command{Name: "completion", Summary: "print a shell completion script (bash, zsh or fish)",
		Synopsis: "bash|zsh|fish",
		About: "Prints a script that completes papersctl's commands, flags and flag values, made from the\n" +
			"same command and flag table the parser uses. Install it with e.g.\n" +
			"  papersctl completion bash > ~/.local/share/bash-completion/completions/papersctl\n" +
			"  papersctl completion zsh > \"${fpath[1]}/_papersctl\"\n" +
			"  papersctl completion fish > ~/.config/fish/completions/papersctl.fish",
		Args: Positional{Synopsis: "bash|zsh|fish", Min: 1, Max: 1, Choices: []string{"bash", "zsh", "fish"}},
		New:  func() Runner { return completionCmd{} }})
}

type completionCmd struct{}

func (completionCmd) Define(*FlagSet)                {}
func (completionCmd) Check(*FlagSet, []string) error { return nil }
func (completionCmd) Run(e *Env, args []string) error {
	m := completionModel()
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

// compCommand is one command as the completion sees it.
type compCommand struct {
	path  string // "selftest", "emu serve"
	about string
	subs  []string
	flags []compFlag
	args  Positional
}

type compFlag struct {
	name    string
	usage   string
	valued  bool
	choices []string
	files   string
}

// completionModel reads every command's flags from the definitions the
// parser uses.
func completionModel() []compCommand {
	var out []compCommand
	var walk func(list []*Command, prefix string)
	walk = func(list []*Command, prefix string) {
		for _, n := range Names(list) {
			c := Lookup(list, n)
			cc := compCommand{path: prefix + c.Name, about: c.Summary, subs: Names(c.Subs), args: c.Args}
			if c.Subs != nil {
				out = append(out, cc)
				walk(c.Subs, cc.path+" ")
				continue
			}
			f := NewFlagSet("papersctl " + cc.path)
			c.New().Define(f)
			f.fs.VisitAll(func(fl *flag.Flag) {
				v := f.lookup(fl.Name)
				if !v.hidden {
					cc.flags = append(cc.flags, compFlag{name: fl.Name, usage: fl.Usage, valued: v.typ != "", choices: v.choices, files: v.files})
				}
			})
			out = append(out, cc)
		}
	}
	walk(Commands, "")
	return out
}

// guestCommands are the commands hil runs in its machines.
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

func writeBash(w io.Writer, m []compCommand) {
	var top, withSubs []string
	for _, c := range m {
		if !strings.Contains(c.path, " ") {
			top = append(top, c.path)
		}
		if c.subs != nil {
			withSubs = append(withSubs, c.path)
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
		if c.subs != nil {
			fmt.Fprintf(w, "            %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.path, strings.Join(c.subs, " "))
		}
	}
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
		if c.subs == nil {
			var fl []string
			for _, f := range c.flags {
				fl = append(fl, Dashed(f.name))
			}
			fmt.Fprintf(w, "            %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", c.path, strings.Join(fl, " "))
		}
	}
	fmt.Fprint(w, `            esac
            [[ $cur == -* ]] && return
        fi
        pos=$COMP_CWORD
    fi
    # The positional words.
    case "$cmd" in
`)
	for _, c := range m {
		switch {
		case c.args.Choices != nil:
			fmt.Fprintf(w, "    %q) COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.path, strings.Join(c.args.Choices, " "))
		case c.args.Complete == "commands":
			fmt.Fprintf(w, "    %q) COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.path, strings.Join(top, " "))
		case c.args.Complete == "guest": // hil: the papersctl command the machines run
			fmt.Fprintf(w, "    %q) ((COMP_CWORD == pos)) && COMPREPLY+=($(compgen -W %q -- \"$cur\")) ;;\n", c.path, strings.Join(GuestCommands(), " "))
		case c.args.Complete == "files":
			fmt.Fprintf(w, "    %q) compopt -o default 2>/dev/null; COMPREPLY+=($(compgen -f -- \"$cur\")) ;;\n", c.path)
		}
	}
	fmt.Fprint(w, `    esac
}

# _papersctl_valued CMD FLAG: does FLAG (-name or --name) take a value?
_papersctl_valued() {
    local f=${2#-}
    case "$1:${f#-}" in
`)
	var valued []string
	for _, c := range m {
		for _, f := range c.flags {
			if f.valued {
				valued = append(valued, fmt.Sprintf("%q", c.path+":"+f.name))
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
		for _, f := range c.flags {
			key := fmt.Sprintf("%q", c.path+":"+f.name)
			switch {
			case f.choices != nil:
				fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", key, strings.Join(f.choices, " "))
			case f.files == "dir":
				fmt.Fprintf(w, "    %s) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n", key)
			case f.files == "file":
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

func writeFish(w io.Writer, m []compCommand) {
	fmt.Fprint(w, "# fish completion for papersctl (papersctl completion fish), generated from its flag table\ncomplete -c papersctl -f\n")
	fmt.Fprint(w, "complete -c papersctl -n __fish_use_subcommand -l help -d 'show the commands'\n")
	fmt.Fprint(w, "complete -c papersctl -n __fish_use_subcommand -l version -d 'print the version'\n")
	for _, c := range m {
		parts := strings.Fields(c.path)
		cond := "__fish_use_subcommand"
		if len(parts) == 2 {
			cond = "__fish_seen_subcommand_from " + parts[0]
		}
		fmt.Fprintf(w, "complete -c papersctl -n %s -a %s -d %s\n", fishQuote(cond), parts[len(parts)-1], fishQuote(c.about))
		if c.subs != nil {
			continue
		}
		in := "__fish_seen_subcommand_from " + parts[len(parts)-1]
		if len(parts) == 2 {
			in = "__fish_seen_subcommand_from " + parts[0] + "; and __fish_seen_subcommand_from " + parts[1]
		}
		for _, f := range c.flags {
			opt := "-l" // --name
			if !strings.HasPrefix(Dashed(f.name), "--") {
				opt = "-o" // -n, -np: fish's old-style option
			}
			fmt.Fprintf(w, "complete -c papersctl -n %s %s %s", fishQuote(in), opt, f.name)
			switch {
			case f.choices != nil:
				fmt.Fprintf(w, " -x -a %s", fishQuote(strings.Join(f.choices, " ")))
			case f.files != "":
				fmt.Fprint(w, " -r -F")
			case f.valued:
				fmt.Fprint(w, " -x")
			}
			fmt.Fprintf(w, " -d %s\n", fishQuote(firstLine(f.usage)))
		}
		switch {
		case c.args.Choices != nil:
			fmt.Fprintf(w, "complete -c papersctl -n %s -a %s\n", fishQuote(in), fishQuote(strings.Join(c.args.Choices, " ")))
		case c.args.Complete == "files":
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
