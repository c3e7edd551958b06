// Package basetest runs papersctl command lines in-process for the tests
// of the command packages.
package basetest

import (
	"bytes"
	"context"
	"os"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
)

// Run runs a papersctl command line in-process, with the commands in
// base.Commands, and returns its stdout, stderr and exit status. Its stdin
// is /dev/null.
func Run(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	defer null.Close()
	status = base.Dispatch(args, &base.Env{Ctx: context.Background(), Stdin: null, Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), status
}
