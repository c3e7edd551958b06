// Package probecmd is papersctl probe.
package probecmd

import (
	"fmt"
	"io"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
)

// Cmd is papersctl probe.
var Cmd = &base.Command{Name: "probe", Summary: "list the printer ports here and which access methods work",
	Synopsis: "[--json]", Guest: true,
	About: "Lists the parallel ports the kernel knows (/proc/ioports, /dev/parport*, /sys/class/ppdev)\n" +
		"and tries every access method on each: ppdev, direct I/O (ioperm), /dev/port. Opening a\n" +
		"port writes two test patterns to its data register (never to the strobes) and restores it.\n" +
		"Exits 1 when no method works on any port.",
	New: func() base.Runner { return &probeCmd{} }}

type probeCmd struct{ json bool }

func (c *probeCmd) Define(f *base.FlagSet)              { f.Bool(&c.json, "json", "print the report as JSON") }
func (c *probeCmd) Check(*base.FlagSet, []string) error { return nil }

func (c *probeCmd) Run(e *base.Env, _ []string) error {
	r := backend.Probe()
	var err error
	if c.json {
		err = printProbeJSON(e.Stdout, r)
	} else {
		printProbe(e.Stdout, r)
	}
	if err != nil {
		return err
	}
	for _, a := range r.Attempts {
		if a.Err == nil {
			return nil
		}
	}
	return base.ErrFailed
}

func printProbe(w io.Writer, r backend.Report) {
	fmt.Fprintln(w, "ports the system knows:")
	if len(r.Found) == 0 {
		fmt.Fprintln(w, "  none (no parport in /proc/ioports, no /dev/parport*: load parport_pc and ppdev, or enable the port in the BIOS)")
	}
	for _, f := range r.Found {
		fmt.Fprintf(w, "  %-10s %-16s (%s)\n", f.Name, f.Where, f.Source)
	}
	fmt.Fprintln(w, "access methods:")
	for _, a := range r.Attempts {
		if a.Err == nil {
			fmt.Fprintf(w, "  %-22s works\n", a.Spec)
		} else {
			fmt.Fprintf(w, "  %-22s fails: %v\n", a.Spec, a.Err)
		}
	}
	fmt.Fprintf(w, "GPIO: %s\n", r.GPIO)
}

func printProbeJSON(w io.Writer, r backend.Report) error {
	type attempt struct {
		Spec  string `json:"spec"`
		Works bool   `json:"works"`
		Error string `json:"error,omitempty"`
	}
	out := struct {
		Found    []backend.Found `json:"found"`
		Attempts []attempt       `json:"attempts"`
		GPIO     string          `json:"gpio"`
	}{Found: r.Found, GPIO: r.GPIO}
	for _, a := range r.Attempts {
		at := attempt{Spec: a.Spec, Works: a.Err == nil}
		if a.Err != nil {
			at.Error = a.Err.Error()
		}
		out.Attempts = append(out.Attempts, at)
	}
	return base.WriteJSON(w, out)
}
