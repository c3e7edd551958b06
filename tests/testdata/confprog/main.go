// Command confprog runs the board's conformance suite (package conformance)
// as one PE of a program, printing "PE k: ok NAME" per case; the side
// channel is files in $CONF_DIR, a directory every PE sees.
package main

import (
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/conformance"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

func main() {
	spmd.Main(func(p *papers.PE) error {
		side := &conformance.DirSide{Dir: os.Getenv("CONF_DIR"), Self: p.Self()}
		for _, c := range conformance.Cases() {
			if err := c.Run(p, side); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			fmt.Printf("PE %d: ok %s\n", p.Self(), c.Name)
		}
		return nil
	})
}
