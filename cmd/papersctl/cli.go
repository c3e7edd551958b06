package main

// The command table and what every command shares: flags defined once (the
// parser, -h and the shell completion all read the same definitions), every
// flag checked before any work, one message per problem, and the same exit
// statuses everywhere.
//
// Adding a command: write a type with
//
//	define(f *flagSet)                 every flag, with f.Int, f.Duration, f.Choice, …
//	check(f *flagSet, args []string) error   ranges across flags, combinations, positional words
//	run(e *env, args []string) error   the work
//
// and register it in an init function. Single-flag ranges and syntax are
// checked as the flag is read (f.Int's bounds, f.Choice's list); check adds
// what needs several flags, collecting every problem with a problems value.
// Where the work is a library's configuration (selftest.Config,
// launch.Config, …), check fills it in and adds what its Validate finds
// (problems.addFields), with a table from each field to its flag: the
// rules live in the library, once, and the messages name the flags.
// run returns nil (exit 0), errFailed after reporting a failure itself
// (exit 1), or an error to print (exit 1); a usage error from check exits
// 2 and a stop signal 128+n (130 for ^C).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/internal/stop"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the work failed, or found a fault
	exitUsage   = 2 // the command line is wrong; nothing was done
)

// A command is one papersctl subcommand.
type command struct {
	name     string
	summary  string // one line, for the command list
	synopsis string // the usage line after "papersctl <name> "
	about    string // what it does, for -h
	// args says what may follow the flags; the zero value takes nothing.
	args positional
	subs []*command // subcommands (emu serve); a command with subs has no runner
	new  func() runner
	// catchSignals: the command stops cleanly on ^C, SIGTERM or SIGHUP
	// (its env's context is cancelled) and the exit status is 128+n.
	// Without it the signal ends the process at once, with the same
	// status as a shell reports it.
	catchSignals bool
	// stopsOnSignal: a stop signal is this command's normal end (a
	// server), so it exits 0 after one.
	stopsOnSignal bool
	// guest: the command makes sense inside a hil machine (its check
	// needs nothing of the host), so hil accepts it and checks its
	// flags before booting anything.
	guest bool
	// hidden: started by papersctl itself (bench-pe), so left out of the
	// command list, the suggestions and the completion.
	hidden bool
}

// positional describes the words after a command's flags.
type positional struct {
	synopsis string   // e.g. "-- PROGRAM [ARGS]"; "" when none are taken
	min      int      // at least this many
	missing  string   // the message when there are fewer (default: "missing " + synopsis)
	max      int      // at most this many; -1: any number
	choices  []string // the words allowed, when fixed (completion bash|zsh|fish)
	// complete says how the shell completes them: "files", "commands"
	// (papersctl's), "guest" (the commands hil runs in its machines) or "".
	complete string
}

// A runner is one run of a command: its flags' values and what it does.
type runner interface {
	define(f *flagSet)
	check(f *flagSet, args []string) error
	run(e *env, args []string) error
}

// env is what a command runs with.
type env struct {
	ctx            context.Context // cancelled by a stop signal when the command catches them
	stdin          *os.File
	stdout, stderr io.Writer
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

// lookup finds a command by name, or a subcommand when parent is set.
func lookup(list []*command, name string) *command {
	for _, c := range list {
		if c.name == name {
			return c
		}
	}
	return nil
}

func names(list []*command) []string {
	var s []string
	for _, c := range list {
		if !c.hidden {
			s = append(s, c.name)
		}
	}
	slices.Sort(s)
	return s
}

// errFailed ends a command with status 1 after it reported why itself (a
// selftest that found a fault prints its report, not an error).
var errFailed = errors.New("failed")

// usageError is a wrong command line: each line is one problem.
type usageError struct{ problems []string }

func (u *usageError) Error() string { return strings.Join(u.problems, "\n") }

// usagef is a usage error with one problem.
func usagef(format string, args ...any) error {
	return &usageError{[]string{fmt.Sprintf(format, args...)}}
}

// problems collects every usage problem a check finds, so that the user
// fixes them in one go.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// addFields records the problems a configuration's Validate found, each
// field its messages name written as the flag that sets it (flags maps a
// field's Go name to the flag's).
func (p *problems) addFields(err error, flags map[string]string) {
	if j, ok := err.(interface{ Unwrap() []error }); ok { // a validator's errors.Join: one problem a line
		for _, e := range j.Unwrap() {
			p.addFields(e, flags)
		}
		return
	}
	if err != nil {
		*p = append(*p, renderFields(err, flags).Error())
	}
}

// renderFields is err with the fields its *field.Error values name
// written as the flags that set them (errors.Is and As still see err).
func renderFields(err error, flags map[string]string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	name := func(f string) string {
		if fl, ok := flags[f]; ok {
			return dashed(fl)
		}
		return ""
	}
	for _, fe := range field.Errors(err) {
		msg = strings.Replace(msg, fe.Error(), fe.Render(name), 1)
	}
	return &rendered{msg, err}
}

type rendered struct {
	msg string
	err error
}

func (r *rendered) Error() string { return r.msg }
func (r *rendered) Unwrap() error { return r.err }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &usageError{p}
}

// main runs papersctl with the process's arguments and streams.
func main() {
	os.Exit(dispatch(os.Args[1:], &env{ctx: context.Background(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
}

// dispatch runs one papersctl command line and returns its exit status.
func dispatch(args []string, e *env) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printUsage(e.stdout)
		return exitOK
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c := lookup(commands, args[0])
	if c == nil {
		fmt.Fprintf(e.stderr, "papersctl: unknown command %q%s\n", args[0], suggest(args[0], names(commands), ""))
		fmt.Fprintln(e.stderr, "run 'papersctl help' for the list of commands")
		return exitUsage
	}
	return runCommand(c, "papersctl "+c.name, args[1:], e)
}

// runCommand parses, checks and runs c (or the subcommand args name).
func runCommand(c *command, path string, args []string, e *env) int {
	if c.subs != nil {
		return runSub(c, path, args, e)
	}
	r, f, rest, err := prepare(c, path, args)
	switch {
	case errors.Is(err, errHelp):
		printHelp(e.stdout, c, path, f)
		return exitOK
	case err != nil:
		for _, p := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(e.stderr, "%s: %s\n", path, p)
		}
		fmt.Fprintf(e.stderr, "run '%s -h' for usage\n", path)
		return exitUsage
	}
	caught := func() os.Signal { return nil }
	if c.catchSignals {
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		var release func()
		caught, release = catchStop(cancel)
		defer release()
		ee := *e
		ee.ctx = ctx
		e = &ee
	}
	err = r.run(e, rest)
	return report(e, path, c, err, caught())
}

// prepare parses and checks a command line of c: everything that happens
// before the work, which must not start when this fails.
func prepare(c *command, path string, args []string) (runner, *flagSet, []string, error) {
	r := c.new()
	f := newFlagSet(path)
	r.define(f)
	rest, err := f.parse(args)
	if err == nil {
		err = checkArgs(c, rest)
	}
	if err == nil {
		err = r.check(f, rest)
	}
	return r, f, rest, err
}

// catchStop cancels the command on the first stop signal and records it;
// a second signal ends the process the default way, for a command that is
// slow to stop. release stops listening.
func catchStop(cancel func()) (caught func() os.Signal, release func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stop.Signals...)
	done := make(chan struct{})
	var got atomic.Value // os.Signal
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs) // the next one acts as if unhandled
			got.Store(sigBox{sig})
			cancel()
		case <-done:
		}
	})
	caught = func() os.Signal {
		b, _ := got.Load().(sigBox)
		return b.sig
	}
	release = func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
	}
	return caught, release
}

type sigBox struct{ sig os.Signal }

// report prints a command's error and returns its exit status.
func report(e *env, path string, c *command, err error, sig os.Signal) int {
	if sig != nil && c.stopsOnSignal { // a server's normal end
		sig = nil
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	}
	if sig != nil && (err == nil || errors.Is(err, context.Canceled)) {
		fmt.Fprintf(e.stderr, "%s: stopped by %v\n", path, sig)
		return stop.Status(sig)
	}
	var status exitStatus
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &status):
		return int(status)
	case errors.Is(err, errFailed):
	default:
		reportFailure(e.stderr, err)
	}
	if sig != nil {
		return stop.Status(sig)
	}
	return exitFailure
}

// reportFailure writes a command's failure under the program's name
// alone: an error from a library names its package itself ("hil: …",
// "launch: …"), so that each layer says its name once.
func reportFailure(w io.Writer, err error) { fmt.Fprintf(w, "papersctl: %v\n", err) }

func runSub(c *command, path string, args []string, e *env) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printHelp(e.stdout, c, path, nil)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "%s: give a subcommand: %s\nrun '%s -h' for usage\n", path, strings.Join(names(c.subs), ", "), path)
		return exitUsage
	}
	sub := lookup(c.subs, args[0])
	if sub == nil {
		fmt.Fprintf(e.stderr, "%s: unknown subcommand %q%s: use %s\nrun '%s -h' for usage\n", path, args[0], suggest(args[0], names(c.subs), ""), strings.Join(names(c.subs), ", "), path)
		return exitUsage
	}
	return runCommand(sub, path+" "+sub.name, args[1:], e)
}

// checkArgs checks the number and words of positional arguments.
func checkArgs(c *command, args []string) error {
	a := c.args
	switch {
	case len(args) > 0 && a.synopsis == "":
		return usagef("unexpected argument %q: this command takes flags only (flags start with --)", args[0])
	case len(args) < a.min && a.missing != "":
		return usagef("%s", a.missing)
	case len(args) < a.min:
		return usagef("missing %s", a.synopsis)
	case a.max >= 0 && len(args) > a.max:
		return usagef("unexpected argument %q after %s", args[a.max], words(args[:a.max]))
	}
	for _, w := range args {
		if a.choices != nil && !slices.Contains(a.choices, w) {
			return usagef("%q: want one of %s%s", w, strings.Join(a.choices, ", "), suggest(w, a.choices, ""))
		}
	}
	return nil
}

// words shows a command line, each word as shown does.
func words(args []string) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = shown(a)
	}
	return strings.Join(s, " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: papersctl <command> [flags]\n\nTTL_PAPERS: test, run and inspect clusters on the embedded emulator or real printer ports.\n\ncommands:\n")
	for _, n := range names(commands) {
		fmt.Fprintf(w, "  %-11s %s\n", n, lookup(commands, n).summary)
	}
	fmt.Fprintf(w, "\nRun 'papersctl help <command>' or 'papersctl <command> -h' for a command's flags.\n"+
		"Exit status: 0 done, 1 failed (or a check found a fault), 2 wrong command line, 130 interrupted.\n")
}

// printHelp prints a command's usage, description and flags. f is nil for
// a command with subcommands.
func printHelp(w io.Writer, c *command, path string, f *flagSet) {
	syn := c.synopsis
	if c.subs != nil {
		syn = "<subcommand> [flags]"
	}
	fmt.Fprintf(w, "usage: %s %s\n\n%s\n", path, syn, c.about)
	if c.subs != nil {
		fmt.Fprintf(w, "\nsubcommands:\n")
		for _, s := range c.subs {
			fmt.Fprintf(w, "  %-11s %s\n", s.name, s.summary)
		}
		return
	}
	if f != nil && f.count() > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		f.printDefaults(w)
	}
}

// help is 'papersctl help [command [subcommand]]'.
type helpCmd struct{}

func (helpCmd) define(*flagSet) {}
func (helpCmd) check(_ *flagSet, args []string) error {
	list, path := commands, "papersctl"
	for _, a := range args {
		c := lookup(list, a)
		if c == nil {
			return usagef("no command %q in %s%s", a, path, suggest(a, names(list), ""))
		}
		list, path = c.subs, path+" "+a
	}
	return nil
}

func (helpCmd) run(e *env, args []string) error {
	if len(args) == 0 {
		printUsage(e.stdout)
		return nil
	}
	list, path := commands, "papersctl"
	var c *command
	for _, a := range args {
		c = lookup(list, a)
		list, path = c.subs, path+" "+a
	}
	var f *flagSet
	if c.subs == nil {
		f = newFlagSet(path)
		c.new().define(f)
	}
	printHelp(e.stdout, c, path, f)
	return nil
}

func init() {
	register(&command{name: "help", summary: "show the commands, or one command's flags",
		synopsis: "[command [subcommand]]", about: "Prints the list of commands, or a command's usage and flags (as 'papersctl <command> -h').",
		args: positional{synopsis: "[command [subcommand]]", max: 2, complete: "commands"},
		new:  func() runner { return helpCmd{} }})
}
