// Command papersctl runs, tests and inspects TTL_PAPERS clusters: on the
// embedded emulator by default, or on real printer ports.
//
// As in the go command's source, package main only wires: the framework
// (the Command type, flag sets, help, shell completion, exit statuses) is
// cmd/papersctl/internal/base, and each command's logic lives in a package
// of its own beside it, which exports its Command as Cmd. The command
// table below is what the parser, the help and the shell completion all
// read. Every command checks all its flags before doing anything and exits
// 0 when done, 1 when the work failed or found a fault, 2 on a wrong
// command line and 128+n when stopped by signal n (130 for ^C).
package main

import (
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/benchcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/democmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/emucmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/hilcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/kicadcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/probecmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/runcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/selftestcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/timingcmd"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/versioncmd"
)

func init() {
	base.Commands = []*base.Command{
		benchcmd.Cmd,
		benchcmd.PECmd,
		base.Completion,
		democmd.Cmd,
		emucmd.Cmd,
		base.Help,
		hilcmd.Cmd,
		kicadcmd.Cmd,
		probecmd.Cmd,
		runcmd.Cmd,
		selftestcmd.Cmd,
		timingcmd.Cmd,
		versioncmd.Cmd,
	}
}

func main() { base.Main() }
