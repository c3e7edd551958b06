package strata_test

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/strata"
)

// Four PEs on the emulated board: a forward scan, a reduction and a
// broadcast, then a clean exit.
func ExampleProgram() {
	err := emulate.Run(4, papers.Config{}, strata.Program(func(s *strata.S) error {
		before, err := s.CombineInt(int32(s.Self()+1), strata.ScanAdd)
		if err != nil {
			return err
		}
		total, err := s.CombineInt(int32(s.Self()+1), strata.ReduceAdd)
		if err != nil {
			return err
		}
		var word strata.Word
		if s.Leftmost() {
			word = 0x5eed
			err = s.Broadcast(word)
		} else {
			word, err = s.ReceiveBroadcast()
		}
		if err != nil {
			return err
		}
		if s.Rightmost() {
			fmt.Printf("PE %d: %d before me, %d in all, PE 0 said %#x\n", s.Self(), before, total, word)
		}
		return s.Exit(0)
	}))
	fmt.Println("error:", err)
	// Output:
	// PE 3: 6 before me, 10 in all, PE 0 said 0x5eed
	// error: <nil>
}

// Qprintf queues output without allocating; EmptyPrintQ writes it.
func ExampleS_Qprintf() {
	emulate.Run(2, papers.Config{}, strata.Program(func(s *strata.S) error {
		if s.Self() == 1 {
			s.Qprintf("PE %d: x = %5.2f\n", s.Self(), 3.14159)
			s.EmptyPrintQ()
		}
		return nil
	}))
	// Output:
	// PE 1: x =  3.14
}
