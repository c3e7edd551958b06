package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ttlpapers/ttlpapers/lpt/backend"
)

func init() {
	register(&command{name: "probe", summary: "list the printer ports here and which access methods work", run: runProbe})
}

func runProbe(args []string) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl probe [--json]\n\n"+
			"Lists the parallel ports the kernel knows (/proc/ioports, /dev/parport*, /sys/class/ppdev)\n"+
			"and tries every access method on each: ppdev, direct I/O (ioperm), /dev/port. Opening a\n"+
			"port writes two test patterns to its data register and restores it.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r := backend.Probe()
	if *asJSON {
		return printProbeJSON(os.Stdout, r)
	}
	printProbe(os.Stdout, r)
	for _, a := range r.Attempts {
		if a.Err == nil {
			return 0
		}
	}
	return 1
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

func printProbeJSON(w io.Writer, r backend.Report) int {
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
	status := 1
	for _, a := range r.Attempts {
		at := attempt{Spec: a.Spec, Works: a.Err == nil}
		if a.Err != nil {
			at.Error = a.Err.Error()
		} else {
			status = 0
		}
		out.Attempts = append(out.Attempts, at)
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	if err := e.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "papersctl probe:", err)
		return 1
	}
	return status
}
