package main

import (
	"bytes"
	"context"
	"os"
)

// runCLI runs a papersctl command line in-process and returns its stdout,
// stderr and exit status. Its stdin is /dev/null.
func runCLI(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	defer null.Close()
	status = dispatch(args, &env{ctx: context.Background(), stdin: null, stdout: &out, stderr: &errOut})
	return out.String(), errOut.String(), status
}
