// Command papersctl runs, tests and inspects TTL_PAPERS clusters: on the
// embedded emulator by default, or on real printer ports.
//
// Each subcommand lives in its own file and registers itself here; the
// command stays a thin layer over the packages it calls.
package main

import (
	"fmt"
	"os"
	"sort"
)

type command struct {
	name    string
	summary string
	run     func(args []string) int // exit status
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func usage() {
	fmt.Fprintf(os.Stderr, "usage: papersctl <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'papersctl <command> -h' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "papersctl: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}
