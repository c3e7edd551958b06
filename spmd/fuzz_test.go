package spmd

import (
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// FuzzEnv: reading the environment and checking it never panics, and
// options that pass Check are ones Open can use: a PE count on a board, a
// PE id below it, a board that is shm:PATH or a port spec, no negative
// timeout.
func FuzzEnv(f *testing.F) {
	f.Add("2", "4", "ppdev:/dev/parport0", "10s", "2m")
	f.Add("0", "1", "shm:/dev/shm/papers-x", "", "")
	f.Add("3", "32", "port:0x378", "1ns", "0")
	f.Add("", "", "gpio:D0=GPIO17", "-1s", "soon")
	f.Add("4", "4", "shm:", "1h", "")
	f.Add("x", "40", "serial:/dev/ttyS0", "", "")
	f.Fuzz(func(t *testing.T, pe, pes, board, timeout, checkIn string) {
		env := map[string]string{EnvPE: pe, EnvPEs: pes, EnvBoard: board, EnvTimeout: timeout, EnvCheckIn: checkIn}
		o, err := envFrom(func(k string) string { return env[k] })
		if err != nil {
			if !strings.Contains(err.Error(), "PAPERS_") {
				t.Fatalf("%v: error %q names no variable", env, err)
			}
			return
		}
		if err := o.Check(); err != nil {
			return
		}
		switch {
		case o.PEs != 0 && (o.PEs < 1 || o.PEs > lpt.MaxPEs),
			o.PE < -1, o.PEs > 0 && o.PE >= o.PEs,
			o.Timeout < 0, o.CheckIn < 0,
			o.Port == "shm:":
			t.Fatalf("%v: Check passes %+v", env, o)
		}
	})
}
