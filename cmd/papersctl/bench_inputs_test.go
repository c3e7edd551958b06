package main

import "github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/benchcmd"

// bench's --procs and bench-pe's wrong command lines, for the checks
// every command's bad input goes through.
func init() {
	for _, bad := range []string{"0", "33", "2,x", ","} {
		badInputs["bench"] = append(badInputs["bench"], badInput{[]string{"--procs", bad}, []string{"--procs " + bad + ": give process counts from 1 to 32"}})
	}
	badInputs["bench"] = append(badInputs["bench"], badInput{[]string{"--procs", "2", "--pes", "8"}, []string{"--pes: --procs measures the barrier and the NAND between live processes"}})
	badInputs[benchcmd.PECmd.Name] = []badInput{
		{nil, []string{"--report: give the pipe PE 0 writes the results to"}},
		{[]string{"--report", "{dir}/r", "--tolerance", "2"}, []string{"--tolerance 2: need a number above 0 and at most 1"}},
	}
}
