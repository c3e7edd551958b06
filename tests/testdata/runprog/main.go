// Command runprog is a PAPERS program that misbehaves on request, for the
// launcher's failure tests: PE -pe does -do (panic, exit3, error, noclose,
// hang) after -after barriers; the others do barriers until stopped.
package main

import (
	"errors"
	"flag"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

var (
	who   = flag.Int("pe", 0, "the PE that misbehaves")
	do    = flag.String("do", "", "panic, exit3, error, noclose or hang; empty: every PE stops cleanly")
	after = flag.Int("after", 100, "barriers before misbehaving")
)

func main() {
	spmd.Main(func(p *papers.PE) error {
		for i := 0; ; i++ {
			if i == *after && *do == "" {
				return nil
			}
			if p.Self() == *who && i == *after {
				switch *do {
				case "panic":
					panic("runprog: asked to panic")
				case "exit3":
					os.Exit(3)
				case "error":
					return errors.New("runprog: asked to fail")
				case "noclose":
					os.Exit(0)
				case "hang":
					time.Sleep(time.Hour)
				}
			}
			if err := p.Barrier(); err != nil {
				return err
			}
		}
	})
}
