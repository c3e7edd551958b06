package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// BoardPEs is the PE count of the board the run creates: PEs, or, when
// PEs is 0, First+N (the board holds exactly this run's PEs).
func (cfg Config) BoardPEs() int {
	if cfg.PEs == 0 {
		return cfg.First + cfg.N
	}
	return cfg.PEs
}

// Validate reports every problem with cfg as *field.Error values, joined,
// before anything is created or started: the PE numbers, the board name,
// the program and the durations.
func (cfg Config) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) { errs = append(errs, field.Errorf(name, format, args...)) }
	pes := cfg.BoardPEs()
	switch {
	case cfg.N < 1 || cfg.N > lpt.MaxPEs:
		bad("N", "{N} %d: need 1 to %d", cfg.N, lpt.MaxPEs)
	case cfg.First < 0:
		bad("First", "{First} %d: PE ids start at 0", cfg.First)
	case cfg.First+cfg.N > pes:
		bad("First", "{First} %d {N} %d: PEs %d to %d do not fit the %d-PE board ({PEs})", cfg.First, cfg.N, cfg.First, cfg.First+cfg.N-1, pes)
	case pes > lpt.MaxPEs:
		bad("First", "{First} %d {N} %d: PE %d is beyond the largest board (%d PEs)", cfg.First, cfg.N, pes-1, lpt.MaxPEs)
	case cfg.Board == "" && (cfg.First > 0 || pes > cfg.First+cfg.N):
		// Nobody could start the other PEs: the run would wait for them
		// until the check-in timeout.
		bad("Board", "{First} %d {N} %d {PEs} %d starts only some of the board's PEs: name the board with {Board}, and start the others with another run naming it (see docs/spmd.md)", cfg.First, cfg.N, pes)
	default:
		if _, err := hw.SizeFor(pes); err != nil {
			bad("PEs", "{PEs} %d: %v", pes, err)
		}
	}
	if cfg.Board != "" {
		var name *emu.NameError
		if errors.As(CheckBoard(cfg.Board), &name) {
			bad("Board", "{Board}: %s", name.Problem())
		}
	}
	if err := checkProgram(cfg.Program); err != nil {
		bad("Program", "%v", err)
	}
	for _, d := range []struct {
		name string
		v    int64
	}{{"OpenTimeout", int64(cfg.OpenTimeout)}, {"Grace", int64(cfg.Grace)}, {"Timeout", int64(cfg.Timeout)}} {
		if d.v < 0 {
			bad(d.name, "{"+d.name+"}: negative: need 0 (the default) or more")
		}
	}
	return errors.Join(errs...)
}

// checkProgram checks that prog names an executable file, as a path or on
// $PATH.
func checkProgram(prog string) error {
	if prog == "" {
		return errors.New("no program to run")
	}
	if _, err := exec.LookPath(prog); err == nil {
		return nil
	}
	if !strings.Contains(prog, "/") {
		return fmt.Errorf("program %q: not found on $PATH (give a path, e.g. %q)", prog, "./"+prog)
	}
	st, err := os.Stat(prog)
	switch {
	case err != nil:
		return fmt.Errorf("program %q: no such file", prog)
	case st.IsDir():
		return fmt.Errorf("program %q: a directory", prog)
	}
	return fmt.Errorf("program %q: not executable (chmod +x %s)", prog, prog)
}
