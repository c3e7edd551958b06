package selftest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// maxNameWidth is the widest check name kept in the CHECK column.
const maxNameWidth = 64

// WriteTable prints the report as a table: check, result, detail, and for
// failures the line, pin, chip and likely cause on the lines below.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "TTL_PAPERS selftest: backend %s, %s mode, %d PEs", r.Backend, r.Mode, r.PEs)
	if r.Mode != Cluster {
		fmt.Fprintf(w, ", this PE %d", r.PE)
	}
	fmt.Fprintln(w)
	if len(r.Injected) > 0 {
		fmt.Fprintf(w, "injected faults: %s\n", strings.Join(r.Injected, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDETAIL")
	shown := ""
	for _, c := range r.Checks {
		res := map[string]string{StatusPass: "pass", StatusFail: "FAIL", StatusNotCheckable: "n/a"}[c.Status]
		name := c.Name
		if len(name) > maxNameWidth { // a diagnosis: its own line, so the column stays narrow
			fmt.Fprintln(tw, name)
			name = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, res, c.Detail)
		// Where and why, once per diagnosis rather than under every
		// check it explains.
		if where := c.Line + c.Chip + c.Cause; c.Status == StatusFail && c.Line != "" && where != shown {
			shown = where
			pin := "-"
			if c.Pin > 0 {
				pin = fmt.Sprint(c.Pin)
			}
			fmt.Fprintf(tw, "\t\t  line %s, DB-25 pin %s; on the board: %s\n", c.Line, pin, c.Chip)
			fmt.Fprintf(tw, "\t\t  likely cause: %s\n", c.Cause)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.PortOps) > 0 {
		fmt.Fprintf(w, "\nport operations (PE 0, nobody late):")
		for _, k := range []string{"barrier", "nand", "vote", "check_interrupt"} {
			if v, ok := r.PortOps[k]; ok {
				fmt.Fprintf(w, " %s %d", k, v)
			}
		}
		fmt.Fprintln(w)
	}
	verdict := "PASS"
	if !r.Pass {
		verdict = fmt.Sprintf("FAIL (%d checks failed)", len(r.Failed()))
	}
	_, err := fmt.Fprintf(w, "\n%s\n", verdict)
	return err
}
