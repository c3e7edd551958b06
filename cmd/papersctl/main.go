// Command papersctl runs, tests and inspects TTL_PAPERS clusters: on the
// embedded emulator by default, or on real printer ports.
//
// Each subcommand lives in its own file and registers itself in the command
// table (cli.go), which the parser, the help and the shell completion all
// read; the command stays a thin layer over the packages it calls. Every
// command checks all its flags before doing anything and exits 0 when done,
// 1 when the work failed or found a fault, 2 on a wrong command line and
// 128+n when stopped by signal n (130 for ^C).
package main
