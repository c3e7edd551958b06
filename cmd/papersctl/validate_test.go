package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
)

// badInput is a wrong command line and what papersctl must say about it.
type badInput struct {
	args []string
	want []string // each problem, in stderr, one line each
}

// badInputs lists, for every command, command lines that must be refused
// before any work with exit 2. {dir} is a
// fresh directory; {marker} a file that a started program would create.
var badInputs = map[string][]badInput{
	"selftest": {
		{[]string{"--pes", "0"}, []string{"--pes 0: need 1 to 32"}},
		{[]string{"--pes", "40"}, []string{"--pes 40: need 1 to 32"}},
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"--port", "zzz"}, []string{`--port: backend: port base "zzz"`}},
		{[]string{"--port", "gpio:D0"}, []string{`--port: gpiomap: mapping item "D0"`}},
		{[]string{"--port", "serial:/dev/ttyS0"}, []string{`--port: backend: unknown port kind "serial"`}},
		{[]string{"--single", "--mode", "cluster"}, []string{"--single and --mode cluster disagree"}},
		{[]string{"--mode", "multi-pc"}, []string{"--mode multi-pc runs on real ports"}},
		{[]string{"--mode", "multi"}, []string{"--mode multi: want one of cluster, single, multi-pc"}},
		{[]string{"--port", "0x378", "--mode", "cluster"}, []string{"--mode cluster drives every PE's port"}},
		{[]string{"--port", "0x378", "--inject", "PE1=unplugged"}, []string{"--inject PE1=unplugged: faults go into the emulator only"}},
		{[]string{"--inject", "PE1.D9=stuck0"}, []string{`--inject: emu: bad fault "PE1.D9=stuck0"`}},
		{[]string{"--inject", "PE1.D6=stuck0", "--inject", "PE1.D6=stuck1"}, []string{`--inject: fault "PE1.D6=stuck1": PE1.D6 already has one (PE1.D6=stuck0)`}},
		{[]string{"--inject", "PE1=unplugged", "--inject", "PE1=unplugged"}, []string{`--inject: fault "PE1=unplugged" given twice`}},
		{[]string{"--pes", "2", "--inject", "PE3=unplugged"}, []string{"--inject PE3=unplugged: PE 3 is not on the 2-PE board"}},
		{[]string{"--pe", "2"}, []string{"--pe 2: cluster mode tests every PE"}},
		{[]string{"--single", "--pes", "4", "--pe", "4"}, []string{"--pe 4: the board for 4 PEs has connectors 0 to 3"}},
		{[]string{"--timeout", "-1s"}, []string{"--timeout -1s: need a duration of 0"}},
		{[]string{"--checkin-timeout", "soon"}, []string{"--checkin-timeout soon: not a duration"}},
		{[]string{"--prompt-timeout", "0"}, []string{"--prompt-timeout 0: need a positive duration"}},
		{[]string{"--no-prompt"}, []string{"--no-prompt: the emulator reads its own LEDs"}},
		{[]string{"--json=maybe"}, []string{"--json maybe: want true or false"}},
		{[]string{"--pse", "3"}, []string{"--pse: no such flag (did you mean --pe"}},
		{[]string{"--pes"}, []string{"--pes: needs a value (--pes N)"}},
		// Two problems: two lines.
		{[]string{"--single", "--mode", "cluster", "--inject", "PE5=unplugged"}, []string{"--single and --mode cluster disagree", "--inject PE5=unplugged: PE 5 is not on the 4-PE board"}},
	},
	"bench": {
		{[]string{"--pes", "0"}, []string{"--pes 0: need 1 to 32"}},
		{[]string{"--ops", "nosuch"}, []string{`--ops: unknown operation "nosuch"`}},
		{[]string{"--ops", "barrier,barrier"}, []string{`--ops: operation "barrier" given twice`}},
		{[]string{"--port-op-us", "-1"}, []string{"--port-op-us -1: need a number above 0"}},
		{[]string{"--port-op-us", "NaN"}, []string{"--port-op-us NaN: not a number"}},
		{[]string{"--tolerance", "0"}, []string{"--tolerance 0: need a number above 0 and at most 1"}},
		{[]string{"--max-time", "0"}, []string{"--max-time 0: need a positive duration"}},
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
	},
	"probe": {
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"--port", "0x378"}, []string{"--port: no such flag"}},
	},
	"run": {
		{[]string{"--", "true"}, []string{"give the number of PEs with -n N"}},
		{[]string{"-n", "0", "--", "true"}, []string{"-n 0: need 1 to 32"}},
		{[]string{"-np", "33", "--", "true"}, []string{"-np 33: need 1 to 32"}},
		{[]string{"-n", "2", "-np", "3", "--", "true"}, []string{"-n 2 and -np 3 disagree"}},
		{[]string{"-n", "2"}, []string{"no program: write papersctl run -n N -- PROGRAM [ARGS]"}},
		{[]string{"-n", "2", "-board", "../../escape", "--", "sh", "-c", "touch {marker}"}, []string{`--board: board name "../../escape" contains '/'`}},
		{[]string{"-n", "2", "-board", "a/b", "--", "true"}, []string{`--board: board name "a/b" contains '/'`}},
		{[]string{"-n", "2", "--first", "3", "--", "sh", "-c", "touch {marker}"}, []string{"--first 3 -n 2 --pes 5 starts only some of the board's PEs: name the board with --board"}},
		{[]string{"-n", "2", "--pes", "4", "--", "true"}, []string{"starts only some of the board's PEs"}},
		{[]string{"-n", "3", "--first", "2", "--pes", "4", "--board", "b", "--", "true"}, []string{"--first 2 -n 3: PEs 2 to 4 do not fit the 4-PE board"}},
		{[]string{"-n", "2", "-dir", "{dir}/nope", "--", "true"}, []string{"--dir {dir}/nope: no such directory"}},
		{[]string{"-n", "2", "--", "/nonexistent/prog"}, []string{`program "/nonexistent/prog": no such file`}},
		// Braces in the user's data are not field names.
		{[]string{"-n", "2", "--", "./run{N}.sh"}, []string{`program "./run{N}.sh": no such file`}},
		{[]string{"-n", "2", "--", "./run-n.sh"}, []string{`program "./run-n.sh": no such file`}},
		{[]string{"-n", "2", "--", "nosuch-program-here"}, []string{`program "nosuch-program-here": not found on $PATH`}},
		{[]string{"-n", "2", "--grace", "0", "--", "true"}, []string{"--grace 0: need a positive duration"}},
	},
	"kicad": {
		{[]string{"extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"--out", ""}, []string{`--out "": empty: give a dir`}},
	},
	"emu": {
		{nil, []string{"give a subcommand: fault, serve"}},
		{[]string{"serv"}, []string{`unknown subcommand "serv" (did you mean serve?)`}},
		{[]string{"serve"}, []string{"--fuse: give the directory"}},
		{[]string{"serve", "--fuse", "{dir}/board", "extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"serve", "--fuse", "{dir}/board", "--pes", "0"}, []string{"--pes 0: need 1 to 32"}},
		{[]string{"serve", "--fuse", "{dir}/board", "--pes", "2", "--inject", "PE2=unplugged"}, []string{"--inject PE2=unplugged: PE 2 is not on the 2-PE board"}},
		{[]string{"fault", "{dir}/board"}, []string{"write papersctl emu fault DIR CHANGE ..."}},
		{[]string{"fault", "{dir}/board", "PE1.D3=stuk0", "PE1=replg"}, []string{`"PE1.D3=stuk0": not a change`, `"PE1=replg": not a change`}},
	},
	"hil": {
		{[]string{"-n", "0", "--", "selftest"}, []string{"-n 0: need 1 to 32"}},
		{[]string{"-n", "2"}, []string{"missing COMMAND [ARGS ...]: what papersctl runs in the machines"}},
		{[]string{"-n", "2", "--", "selftets"}, []string{`"selftets" is not a papersctl command the machines can run`}},
		{[]string{"-n", "2", "--", "run", "-n", "2", "--", "true"}, []string{"run: the machines run bench, demo, probe, selftest, version"}},
		{[]string{"-n", "2", "--", "selftest", "--pes", "0"}, []string{"in machine 0's 'papersctl selftest --pes 0': --pes 0: need 1 to 32"}},
		{[]string{"-n", "2", "--", "selftest", "--port", "0x378", "--pe", "{pe}", "--pes", "1"}, []string{"in machine 1's 'papersctl selftest --port 0x378 --pe 1 --pes 1': --pe 1: with --pes 1 the PE ids are 0 to 0"}},
		{[]string{"-n", "2", "--inject", "PE2.D0=stuck1", "--", "selftest"}, []string{"--inject PE2.D0=stuck1: PE 2 is not on the 2-PE board"}},
		{[]string{"-n", "1", "--memory", "12Q", "--", "version"}, []string{"--memory 12Q: want a size such as 192M"}},
		{[]string{"-n", "1", "--binary", "{dir}/nope", "--", "version"}, []string{"--binary {dir}/nope: no such file"}},
		{[]string{"-n", "1", "--timeout", "0", "--", "version"}, []string{"--timeout 0: need a positive duration"}},
		{[]string{"-n", "1", "--fuse", "/dev/null", "--", "version"}, []string{"--fuse /dev/null is not a directory: name a new or an empty directory"}},
	},
	"demo": {
		{[]string{"extra", "--pes", "2"}, []string{`unexpected argument "extra"`}},
		{[]string{"--pe", "9"}, []string{"--pe 9: picks this PC's PE on a real board: give --port too"}},
		{[]string{"--port", "0x378", "--pes", "2", "--pe", "3"}, []string{"--pe 3: with --pes 2 the PE ids are 0 to 1"}},
		{[]string{"--port", "nowhere"}, []string{`--port: backend: port base "nowhere"`}},
		{[]string{"--pes", "33"}, []string{"--pes 33: need 1 to 32"}},
		{[]string{"--bench", "-1"}, []string{"--bench -1: need 0 to"}},
	},
	"version":    {{[]string{"extra"}, []string{`unexpected argument "extra"`}}},
	"completion": {{nil, []string{"missing bash|zsh|fish"}}, {[]string{"tcsh"}, []string{`"tcsh": want one of bash, zsh, fish`}}, {[]string{"bash", "zsh"}, []string{`unexpected argument "zsh" after bash`}}},
	"help":       {{[]string{"nosuch"}, []string{`no command "nosuch"`}}, {[]string{"emu", "nosuch"}, []string{`no command "nosuch" in papersctl emu`}}},
}

// TestBadInputRefusedBeforeWork drives every command with wrong command
// lines: each must exit 2 with exactly one line per problem, prefixed by
// the command once, then the usage hint, print nothing on stdout, and do
// nothing (no file written, no program started, no board created, nothing
// built, no wait announced).
func TestBadInputRefusedBeforeWork(t *testing.T) {
	for _, c := range base.Commands {
		if len(badInputs[c.Name]) == 0 {
			t.Errorf("command %s has no bad-input cases in badInputs: add its wrong command lines", c.Name)
		}
	}
	for name, cases := range badInputs {
		for _, bc := range cases {
			dir := t.TempDir()
			t.Chdir(dir)
			marker := filepath.Join(dir, "started")
			args := []string{name}
			for _, a := range bc.args {
				a = strings.ReplaceAll(a, "{dir}", dir)
				args = append(args, strings.ReplaceAll(a, "{marker}", marker))
			}
			if name == "run" {
				args = append([]string{"run", "-dir", dir}, args[1:]...)
			}
			stdout, stderr, status := runCLI(args...)
			path := "papersctl " + name
			if name == "emu" && len(bc.args) > 0 && (bc.args[0] == "serve" || bc.args[0] == "fault") {
				path += " " + bc.args[0]
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if status != base.ExitUsage || stdout != "" || len(lines) != len(bc.want)+1 {
				t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit 2, no stdout, %d problem lines and the hint", args, status, stdout, stderr, len(bc.want))
				continue
			}
			for i, want := range bc.want {
				want = strings.ReplaceAll(want, "{dir}", dir)
				if !strings.HasPrefix(lines[i], path+": ") || !strings.Contains(lines[i], want) {
					t.Errorf("%q: line %q, want %q after %q", args, lines[i], want, path+": ")
				}
				if rest := strings.TrimPrefix(lines[i], path+": "); strings.HasPrefix(rest, name+":") {
					t.Errorf("%q: the prefix repeats: %q", args, lines[i])
				}
			}
			if hint := lines[len(lines)-1]; hint != "run '"+path+" -h' for usage" {
				t.Errorf("%q: last line %q, want the usage hint", args, hint)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("%q: work was done before refusing: %v in the directory", args, names)
			}
			for _, banned := range []string{"waiting", "building"} {
				if strings.Contains(stderr, banned) {
					t.Errorf("%q: stderr says %q before refusing", args, banned)
				}
			}
		}
	}
}

// TestHelpExitsZero: -h, --help and help <command> print the usage on
// stdout and exit 0, for papersctl and every command.
func TestHelpExitsZero(t *testing.T) {
	lines := [][]string{{"-h"}, {"--help"}, {"help"}}
	for _, c := range base.Commands {
		lines = append(lines, []string{c.Name, "-h"}, []string{c.Name, "--help"}, []string{"help", c.Name})
		for _, s := range c.Subs {
			lines = append(lines, []string{c.Name, s.Name, "-h"}, []string{"help", c.Name, s.Name})
		}
	}
	for _, args := range lines {
		stdout, stderr, status := runCLI(args...)
		if status != base.ExitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: papersctl") {
			t.Errorf("%q: exit %d, stderr %q, stdout %.60q; want 0 and the usage on stdout", args, status, stderr, stdout)
		}
	}
	// No arguments at all is a usage error.
	if _, stderr, status := runCLI(); status != base.ExitUsage || !strings.HasPrefix(stderr, "usage: papersctl") {
		t.Errorf("no arguments: exit %d, stderr %q; want 2 and the usage", status, stderr)
	}
	if _, stderr, status := runCLI("nosuch"); status != base.ExitUsage || !strings.Contains(stderr, `unknown command "nosuch"`) {
		t.Errorf("unknown command: exit %d, stderr %q", status, stderr)
	}
}

// TestHelpListsEveryFlag: a command's -h lists each flag the parser knows,
// but not the internal ones.
func TestHelpListsEveryFlag(t *testing.T) {
	for _, cc := range base.CompletionModel() {
		if cc.Subs != nil {
			continue
		}
		stdout, _, _ := runCLI(append(strings.Fields(cc.Path), "-h")...)
		for _, f := range cc.Flags {
			if !strings.Contains(stdout, base.Dashed(f.Name)+" ") && !strings.Contains(stdout, base.Dashed(f.Name)+"\n") {
				t.Errorf("%s -h does not list %s:\n%s", cc.Path, base.Dashed(f.Name), stdout)
			}
		}
		if cc.Path == "hil" && slices.ContainsFunc(cc.Flags, func(f base.CompFlag) bool { return f.Name == "guest" }) {
			t.Errorf("hil's internal --guest is offered to users")
		}
	}
}
