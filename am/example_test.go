package am_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// A request whose handler replies, on two emulated PEs: PE 0 asks PE 1 to
// double a number and waits for the answer; PE 1 answers from its barrier,
// which polls while it waits.
func Example() {
	err := emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
		ep, err := am.Of(p)
		if err != nil {
			return err
		}
		var answer uint64
		got := false
		// Every PE registers the same handlers in the same order.
		hAnswer := ep.Register(func(m *am.Msg) { answer, got = m.Args[0], true })
		hDouble := ep.Register(func(m *am.Msg) { m.Reply(hAnswer, am.Args{2 * m.Args[0]}) })
		if p.Self() == 0 {
			if err := ep.Request(1, hDouble, am.Args{21}); err != nil {
				return err
			}
			if err := ep.Wait("answer", 1, func() bool { return got }); err != nil {
				return err
			}
			fmt.Println("PE 1 answered", answer)
		}
		return am.Barrier(p)
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: PE 1 answered 42
}
