package spmd

import (
	"os"
	"strings"
	"testing"
)

// TestResolveLauncher: started by an MPI launcher, a PE takes its id and
// count from it whatever its port, {pe} in the spec becomes its id, and a
// PAPERS_PE or PAPERS_PES that disagrees is refused.
func TestResolveLauncher(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_RANK", "2")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	for _, c := range []struct {
		in      Options
		want    Options
		refused bool
	}{
		{Options{PE: -1, Port: "ppdev:/run/board/parport{pe}"}, Options{PE: 2, PEs: 4, Port: "ppdev:/run/board/parport2"}, false},
		{Options{PE: -1, Port: "0x378"}, Options{PE: 2, PEs: 4, Port: "0x378"}, false},
		{Options{PE: 2, PEs: 4, Port: "0x378"}, Options{PE: 2, PEs: 4, Port: "0x378"}, false},
		{Options{PE: -1}, Options{PE: 2, PEs: 4, Port: "mpi"}, false},
		{Options{PE: 1, Port: "0x378"}, Options{}, true},
		{Options{PE: -1, PEs: 3, Port: "0x378"}, Options{}, true},
	} {
		got, err := c.in.resolve(launchedBy(os.Getenv))
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), "disagree with the MPI launcher")):
			t.Errorf("%+v: %+v, %v; want it refused", c.in, got, err)
		case !c.refused && (err != nil || got != c.want):
			t.Errorf("%+v: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// TestResolveByHand: with no launcher, {pe} takes the PE id given.
func TestResolveByHand(t *testing.T) {
	got, err := Options{PE: 3, PEs: 4, Port: "ppdev:/b/parport{pe}"}.resolve(launcher{})
	if err != nil || got.Port != "ppdev:/b/parport3" {
		t.Errorf("resolve: %+v, %v; want port ppdev:/b/parport3", got, err)
	}
}
