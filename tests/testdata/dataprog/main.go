// Command dataprog runs the data network's conformance cases
// (conformance/dataconf) as the processes of papersctl run, printing "ok
// NAME" per case; with -die K, PE K kills itself (SIGKILL) while the
// others add to its global memory, and they print what they got.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"

	"github.com/ttlpapers/ttlpapers/conformance/dataconf"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

var die = flag.Int("die", -1, "the PE that kills itself while the others add to its memory")

func main() {
	spmd.Main(func(p *papers.PE) error {
		if *die >= 0 {
			return dying(p)
		}
		for _, c := range dataconf.Cases() {
			if err := c.Run(p); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			fmt.Println("ok", c.Name)
		}
		return nil
	})
}

func dying(p *papers.PE) error {
	return dataconf.Victim(p, *die, func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
}
