package base

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/field"
)

// toyCmd is a command with one flag of each kind, for the framework alone.
type toyCmd struct {
	n     int
	d     time.Duration
	mode  string
	json  bool
	fail  error
	ran   *[]string
	inner bool
}

var errToy = errors.New("toy: out of range")

func (c *toyCmd) Define(f *FlagSet) {
	f.Int(&c.n, "pes", 4, 1, 32, "number of PEs")
	f.Duration(&c.d, "timeout", time.Second, false, "bound on each wait")
	f.Choice(&c.mode, "mode", "fast", []string{"fast", "slow"}, "speed")
	f.Bool(&c.json, "json", "print JSON")
	f.Func("weird", "W", func(s string) error { return errToy }, "always refused")
	f.Func("name", "NAME", func(s string) error { return fmt.Errorf("name %q is taken", s) }, "a name, always taken")
	f.NamesValue("name")
	f.Bool(&c.inner, "inner", "internal")
	f.Hide("inner")
}

func (c *toyCmd) Check(f *FlagSet, args []string) error {
	var p Problems
	if f.IsSet("mode") && c.mode == "slow" && c.n > 8 {
		p.Addf("--mode slow: at most 8 PEs")
	}
	if c.n%2 == 1 { // a library's Validate, as AddFields takes it
		p.AddFields(errors.Join(field.Errorf("PEs", "{PEs} %d: odd", c.n)), map[string]string{"PEs": "pes"})
	}
	return p.Err()
}

func (c *toyCmd) Run(e *Env, args []string) error {
	*c.ran = append(*c.ran, fmt.Sprint(c.n, args))
	return c.fail
}

// toy installs a command table of one toy command and returns what its
// runs saw.
func toy(t *testing.T, fail error) *[]string {
	t.Helper()
	ran := new([]string)
	saved := Commands
	t.Cleanup(func() { Commands = saved })
	Commands = []*Command{Help, Completion, {Name: "toy", Summary: "a toy", Synopsis: "[flags] [WORD]",
		Args: Positional{Synopsis: "[WORD]", Max: 1},
		New:  func() Runner { return &toyCmd{ran: ran, fail: fail} }}}
	return ran
}

func dispatch(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	status = Dispatch(args, &Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), status
}

// TestFlagErrors: each kind of wrong flag is a *FlagError of its kind,
// found before any work, with the message naming the flag and the fix.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args    []string
		problem FlagProblem
		flag    string
		want    string
	}{
		{[]string{"--pess", "3"}, UnknownFlag, "pess", "--pess: no such flag (did you mean --pes?)"},
		{[]string{"--pes"}, MissingValue, "pes", "--pes: needs a value (--pes N)"},
		{[]string{"--pes", "40"}, BadValue, "pes", "--pes 40: need 1 to 32"},
		{[]string{"-pes=x"}, BadValue, "pes", "--pes x: not a whole number: need 1 to 32"},
		{[]string{"--mode", "slwo"}, BadValue, "mode", "--mode slwo: want one of fast, slow (did you mean slow?)"},
		{[]string{"---pes"}, BadSyntax, "---pes", "---pes: bad flag syntax: write --name or --name=value"},
		{[]string{"--inner=maybe"}, BadValue, "inner", "--inner maybe: want true or false (or give the flag alone)"},
		{[]string{"--weird", "x y"}, BadValue, "weird", `--weird "x y": toy: out of range`},
		{[]string{"--name", "bob"}, BadValue, "name", `--name: name "bob" is taken`}, // its check quotes the value: once
	} {
		ran := toy(t, nil)
		_, _, _, err := Prepare(Lookup(Commands, "toy"), "papersctl toy", c.args)
		fe, ok := errors.AsType[*FlagError](err)
		if !ok || fe.Problem != c.problem || fe.Flag != c.flag || err.Error() != c.want {
			t.Errorf("%q: %#v (%v), want problem %d on %q: %q", c.args, err, err, c.problem, c.flag, c.want)
		}
		_, stderr, status := dispatch(append([]string{"toy"}, c.args...)...)
		if status != ExitUsage || !strings.HasPrefix(stderr, "papersctl toy: "+c.want+"\n") || len(*ran) != 0 {
			t.Errorf("%q: exit %d, ran %v, stderr %q", c.args, status, *ran, stderr)
		}
	}
	toy(t, nil)
	_, _, _, err := Prepare(Lookup(Commands, "toy"), "papersctl toy", []string{"--weird", "x"})
	if !errors.Is(err, errToy) {
		t.Errorf("the setter's own error is not in the chain: %v", err)
	}
}

// TestParseForms: the forms package flag takes are all read: -name and
// --name, =value and the next word, a bool alone, "--" ending the flags.
func TestParseForms(t *testing.T) {
	ran := toy(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-pes", "2", "word"}, "2 [word]"},
		{[]string{"--pes=6", "--json", "--", "-x"}, "6 [-x]"},
		{[]string{"--json", "--pes", "8"}, "8 []"},
		{nil, "4 []"},
	} {
		*ran = nil
		if _, stderr, status := dispatch(append([]string{"toy"}, c.args...)...); status != ExitOK || !slices.Equal(*ran, []string{c.want}) {
			t.Errorf("%q: exit %d (%s), ran %q, want %q", c.args, status, stderr, *ran, c.want)
		}
	}
}

// TestChecksAndStatuses: every problem of a check is a line of its own,
// a field error names the flag, and the exit statuses are the documented
// ones.
func TestChecksAndStatuses(t *testing.T) {
	ran := toy(t, nil)
	_, stderr, status := dispatch("toy", "--mode", "slow", "--pes", "9")
	want := "papersctl toy: --mode slow: at most 8 PEs\npapersctl toy: --pes 9: odd\nrun 'papersctl toy -h' for usage\n"
	if status != ExitUsage || stderr != want || len(*ran) != 0 {
		t.Errorf("exit %d, ran %v, stderr %q, want %q", status, *ran, stderr, want)
	}
	if _, stderr, status := dispatch("toy", "a", "b"); status != ExitUsage || !strings.Contains(stderr, `unexpected argument "b" after a`) {
		t.Errorf("two words: exit %d, %q", status, stderr)
	}
	if _, stderr, status := dispatch("tyo"); status != ExitUsage || !strings.Contains(stderr, `unknown command "tyo" (did you mean toy?)`) {
		t.Errorf("unknown command: exit %d, %q", status, stderr)
	}
	for _, c := range []struct {
		fail   error
		status int
		stderr string
	}{
		{nil, ExitOK, ""},
		{ErrFailed, ExitFailure, ""},
		{ExitStatus(7), 7, ""},
		{fmt.Errorf("launch: %w", errToy), ExitFailure, "papersctl: launch: toy: out of range\n"},
	} {
		toy(t, c.fail)
		if _, stderr, status := dispatch("toy"); status != c.status || stderr != c.stderr {
			t.Errorf("run returns %v: exit %d, stderr %q; want %d, %q", c.fail, status, stderr, c.status, c.stderr)
		}
	}
}

// TestHelp: -h and help print the flags but not the hidden one, and exit 0.
func TestHelp(t *testing.T) {
	toy(t, nil)
	for _, args := range [][]string{{"toy", "-h"}, {"toy", "--help"}, {"help", "toy"}} {
		stdout, _, status := dispatch(args...)
		if status != ExitOK || !strings.Contains(stdout, "--pes N\n") || !strings.Contains(stdout, "(default 4)") || strings.Contains(stdout, "--inner") {
			t.Errorf("%q: exit %d, %q", args, status, stdout)
		}
	}
	if stdout, _, status := dispatch("--help"); status != ExitOK || !strings.Contains(stdout, "  toy ") {
		t.Errorf("--help: exit %d, %q", status, stdout)
	}
}

// TestCompletionModel: the completion sees every flag the parser knows,
// but not the hidden ones.
func TestCompletionModel(t *testing.T) {
	toy(t, nil)
	var flags []string
	for _, c := range CompletionModel() {
		if c.Path == "toy" {
			for _, f := range c.Flags {
				flags = append(flags, f.Name)
			}
		}
	}
	if want := []string{"json", "mode", "name", "pes", "timeout", "weird"}; !slices.Equal(flags, want) {
		t.Errorf("toy's flags in the completion: %q, want %q", flags, want)
	}
}

// TestOnePrefixPerLayer: a library's error is shown under the program's
// name alone, since it names its package itself.
func TestOnePrefixPerLayer(t *testing.T) {
	for _, msg := range []string{"hil: 0 machines", "emu: fault x", "launch: board in use"} {
		var b strings.Builder
		ReportFailure(&b, fmt.Errorf("%w", errors.New(msg)))
		if got, want := b.String(), "papersctl: "+msg+"\n"; got != want {
			t.Errorf("%q shown as %q, want %q", msg, got, want)
		}
	}
}
