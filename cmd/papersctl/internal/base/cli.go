// Package base is papersctl's framework, as the go command's source has
// one: the Command type, flag sets that check each value as it is read,
// usage errors, help, shell completion and exit statuses.
package base

// What every command shares: flags defined once (the parser, -h and the
// shell completion all read the same definitions), every flag checked
// before any work, one message per problem, and the same exit statuses
// everywhere.
//
// Adding a command: in a package of its own under cmd/papersctl/internal,
// write a type with
//
//	Define(f *base.FlagSet)                     every flag, with f.Int, f.Duration, f.Choice, …
//	Check(f *base.FlagSet, args []string) error ranges across flags, combinations, positional words
//	Run(e *base.Env, args []string) error       the work
//
// export its *base.Command as Cmd and list it in package main's table.
// Single-flag ranges and syntax are checked as the flag is read (f.Int's
// bounds, f.Choice's list); Check adds what needs several flags,
// collecting every problem with a Problems value. Where the work is a
// library's configuration (selftest.Config, launch.Config, …), Check fills
// it in and adds what its Validate finds (Problems.AddFields), with a
// table from each field to its flag: the rules live in the library, once,
// and the messages name the flags. Run returns nil (exit 0), ErrFailed
// after reporting a failure itself (exit 1), or an error to print (exit
// 1); a usage error from Check exits 2 and a stop signal 128+n (130 for
// ^C).

import (
	"context"
	"encoding/json"
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
	ExitOK      = 0
	ExitFailure = 1 // the work failed, or found a fault
	ExitUsage   = 2 // the command line is wrong; nothing was done
)

// Command is one papersctl subcommand.
type Command struct {
	Name     string
	Summary  string // one line, for the command list
	Synopsis string // the usage line after "papersctl <name> "
	About    string // what it does, for -h
	// Args says what may follow the flags; the zero value takes nothing.
	Args Positional
	Subs []*Command // subcommands (emu serve); a command with subs has no runner
	New  func() Runner
	// CatchSignals: the command stops cleanly on ^C, SIGTERM or SIGHUP
	// (its env's context is cancelled) and the exit status is 128+n.
	// Without it the signal ends the process at once, with the same
	// status as a shell reports it.
	CatchSignals bool
	// StopsOnSignal: a stop signal is this command's normal end (a
	// server), so it exits 0 after one.
	StopsOnSignal bool
	// Guest: the command makes sense inside a hil machine (its check
	// needs nothing of the host), so hil accepts it and checks its
	// flags before booting anything.
	Guest bool
	// Hidden: started by papersctl itself (bench-pe), so left out of the
	// command list, the suggestions and the completion.
	Hidden bool
}

// Positional describes the words after a command's flags.
type Positional struct {
	Synopsis string   // e.g. "-- PROGRAM [ARGS]"; "" when none are taken
	Min      int      // at least this many
	Missing  string   // the message when there are fewer (default: "missing " + synopsis)
	Max      int      // at most this many; -1: any number
	Choices  []string // the words allowed, when fixed (completion bash|zsh|fish)
	// Complete says how the shell completes them: "files", "commands"
	// (papersctl's), "guest" (the commands hil runs in its machines) or "".
	Complete string
}

// Runner is one run of a command: its flags' values and what it does.
type Runner interface {
	Define(f *FlagSet)
	Check(f *FlagSet, args []string) error
	Run(e *Env, args []string) error
}

// Env is what a command runs with.
type Env struct {
	Ctx            context.Context // cancelled by a stop signal when the command catches them
	Stdin          *os.File
	Stdout, Stderr io.Writer
}

// Commands is papersctl's command table, which package main fills in:
// the parser, the help and the shell completion all read it.
var Commands []*Command

// Lookup finds a command by name, or a subcommand when parent is set.
func Lookup(list []*Command, name string) *Command {
	for _, c := range list {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func Names(list []*Command) []string {
	var s []string
	for _, c := range list {
		if !c.Hidden {
			s = append(s, c.Name)
		}
	}
	slices.Sort(s)
	return s
}

// ErrFailed ends a command with status 1 after it reported why itself (a
// selftest that found a fault prints its report, not an error).
var ErrFailed = errors.New("failed")

// UsageError is a wrong command line: each line is one problem.
type UsageError struct{ Lines []string }

func (u *UsageError) Error() string { return strings.Join(u.Lines, "\n") }

// UsageLines are the problems of a usage error, one a line: a
// *UsageError's lines, or the one line of any other error (a *FlagError).
func UsageLines(err error) []string {
	if u, ok := errors.AsType[*UsageError](err); ok {
		return u.Lines
	}
	return []string{err.Error()}
}

// Usagef is a usage error with one problem.
func Usagef(format string, args ...any) error {
	return &UsageError{[]string{fmt.Sprintf(format, args...)}}
}

// Problems collects every usage problem a check finds, so that the user
// fixes them in one go.
type Problems []string

func (p *Problems) Addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// AddFields records the problems a configuration's Validate found (its
// errors.Join of *field.Error values: one problem a line), each field
// written as the flag that sets it (flags maps a field's Go name to the
// flag's). field.Name walks the tree: no text is read or rewritten.
func (p *Problems) AddFields(err error, flags map[string]string) {
	field.Name(err, func(f string) string {
		if fl, ok := flags[f]; ok {
			return Dashed(fl)
		}
		return ""
	})
	p.addJoined(err)
}

// addJoined adds each error a join holds as a problem of its own.
func (p *Problems) addJoined(err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			p.addJoined(e)
		}
		return
	}
	if err != nil {
		*p = append(*p, err.Error())
	}
}

func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &UsageError{p}
}

// Main runs papersctl with the process's arguments and streams, and
// exits with its status.
func Main() {
	os.Exit(Dispatch(os.Args[1:], &Env{Ctx: context.Background(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// Dispatch runs one papersctl command line and returns its exit status.
func Dispatch(args []string, e *Env) int {
	if len(args) == 0 {
		printUsage(e.Stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printUsage(e.Stdout)
		return ExitOK
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c := Lookup(Commands, args[0])
	if c == nil {
		fmt.Fprintf(e.Stderr, "papersctl: unknown command %q%s\n", args[0], Suggest(args[0], Names(Commands), ""))
		fmt.Fprintln(e.Stderr, "run 'papersctl help' for the list of commands")
		return ExitUsage
	}
	return runCommand(c, "papersctl "+c.Name, args[1:], e)
}

// runCommand parses, checks and runs c (or the subcommand args name).
func runCommand(c *Command, path string, args []string, e *Env) int {
	if c.Subs != nil {
		return runSub(c, path, args, e)
	}
	r, f, rest, err := Prepare(c, path, args)
	switch {
	case errors.Is(err, ErrHelp):
		printHelp(e.Stdout, c, path, f)
		return ExitOK
	case err != nil:
		for _, p := range UsageLines(err) {
			fmt.Fprintf(e.Stderr, "%s: %s\n", path, p)
		}
		fmt.Fprintf(e.Stderr, "run '%s -h' for usage\n", path)
		return ExitUsage
	}
	caught := func() os.Signal { return nil }
	if c.CatchSignals {
		ctx, cancel := context.WithCancel(e.Ctx)
		defer cancel()
		var release func()
		caught, release = catchStop(cancel)
		defer release()
		ee := *e
		ee.Ctx = ctx
		e = &ee
	}
	err = r.Run(e, rest)
	return report(e, path, c, err, caught())
}

// Prepare parses and checks a command line of c: everything that happens
// before the work, which must not start when this fails.
func Prepare(c *Command, path string, args []string) (Runner, *FlagSet, []string, error) {
	r := c.New()
	f := NewFlagSet(path)
	r.Define(f)
	rest, err := f.parse(args)
	if err == nil {
		err = checkArgs(c, rest)
	}
	if err == nil {
		err = r.Check(f, rest)
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
func report(e *Env, path string, c *Command, err error, sig os.Signal) int {
	if sig != nil && c.StopsOnSignal { // a server's normal end
		sig = nil
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	}
	if sig != nil && (err == nil || errors.Is(err, context.Canceled)) {
		fmt.Fprintf(e.Stderr, "%s: stopped by %v\n", path, sig)
		return stop.Status(sig)
	}
	var status ExitStatus
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &status):
		return int(status)
	case errors.Is(err, ErrFailed):
	default:
		ReportFailure(e.Stderr, err)
	}
	if sig != nil {
		return stop.Status(sig)
	}
	return ExitFailure
}

// ReportFailure writes a command's failure under the program's name
// alone: an error from a library names its package itself ("hil: …",
// "launch: …"), so that each layer says its name once.
func ReportFailure(w io.Writer, err error) { fmt.Fprintf(w, "papersctl: %v\n", err) }

func runSub(c *Command, path string, args []string, e *Env) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printHelp(e.Stdout, c, path, nil)
		return ExitOK
	}
	if len(args) == 0 {
		fmt.Fprintf(e.Stderr, "%s: give a subcommand: %s\nrun '%s -h' for usage\n", path, strings.Join(Names(c.Subs), ", "), path)
		return ExitUsage
	}
	sub := Lookup(c.Subs, args[0])
	if sub == nil {
		fmt.Fprintf(e.Stderr, "%s: unknown subcommand %q%s: use %s\nrun '%s -h' for usage\n", path, args[0], Suggest(args[0], Names(c.Subs), ""), strings.Join(Names(c.Subs), ", "), path)
		return ExitUsage
	}
	return runCommand(sub, path+" "+sub.Name, args[1:], e)
}

// checkArgs checks the number and words of positional arguments.
func checkArgs(c *Command, args []string) error {
	a := c.Args
	switch {
	case len(args) > 0 && a.Synopsis == "":
		return Usagef("unexpected argument %q: this command takes flags only (flags start with --)", args[0])
	case len(args) < a.Min && a.Missing != "":
		return Usagef("%s", a.Missing)
	case len(args) < a.Min:
		return Usagef("missing %s", a.Synopsis)
	case a.Max >= 0 && len(args) > a.Max:
		return Usagef("unexpected argument %q after %s", args[a.Max], Words(args[:a.Max]))
	}
	for _, w := range args {
		if a.Choices != nil && !slices.Contains(a.Choices, w) {
			return Usagef("%q: want one of %s%s", w, strings.Join(a.Choices, ", "), Suggest(w, a.Choices, ""))
		}
	}
	return nil
}

// Words shows a command line, each word as shown does.
func Words(args []string) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = Shown(a)
	}
	return strings.Join(s, " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: papersctl <command> [flags]\n\nTTL_PAPERS: test, run and inspect clusters on the embedded emulator or real printer ports.\n\ncommands:\n")
	for _, n := range Names(Commands) {
		fmt.Fprintf(w, "  %-11s %s\n", n, Lookup(Commands, n).Summary)
	}
	fmt.Fprintf(w, "\nRun 'papersctl help <command>' or 'papersctl <command> -h' for a command's flags.\n"+
		"Exit status: 0 done, 1 failed (or a check found a fault), 2 wrong command line, 130 interrupted.\n")
}

// printHelp prints a command's usage, description and flags. f is nil for
// a command with subcommands.
func printHelp(w io.Writer, c *Command, path string, f *FlagSet) {
	syn := c.Synopsis
	if c.Subs != nil {
		syn = "<subcommand> [flags]"
	}
	fmt.Fprintf(w, "usage: %s %s\n\n%s\n", path, syn, c.About)
	if c.Subs != nil {
		fmt.Fprintf(w, "\nsubcommands:\n")
		for _, s := range c.Subs {
			fmt.Fprintf(w, "  %-11s %s\n", s.Name, s.Summary)
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

func (helpCmd) Define(*FlagSet) {}
func (helpCmd) Check(_ *FlagSet, args []string) error {
	list, path := Commands, "papersctl"
	for _, a := range args {
		c := Lookup(list, a)
		if c == nil {
			return Usagef("no command %q in %s%s", a, path, Suggest(a, Names(list), ""))
		}
		list, path = c.Subs, path+" "+a
	}
	return nil
}

func (helpCmd) Run(e *Env, args []string) error {
	if len(args) == 0 {
		printUsage(e.Stdout)
		return nil
	}
	list, path := Commands, "papersctl"
	var c *Command
	for _, a := range args {
		c = Lookup(list, a)
		list, path = c.Subs, path+" "+a
	}
	var f *FlagSet
	if c.Subs == nil {
		f = NewFlagSet(path)
		c.New().Define(f)
	}
	printHelp(e.Stdout, c, path, f)
	return nil
}

// Help is papersctl help.
var Help = &Command{Name: "help", Summary: "show the commands, or one command's flags",
	Synopsis: "[command [subcommand]]", About: "Prints the list of commands, or a command's usage and flags (as 'papersctl <command> -h').",
	Args: Positional{Synopsis: "[command [subcommand]]", Max: 2, Complete: "commands"},
	New:  func() Runner { return helpCmd{} }}

// ExitStatus is an error that ends papersctl with that status, already
// explained.
type ExitStatus int

func (s ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// WriteJSON writes v indented, as every command's --json does.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
