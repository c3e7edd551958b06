package spmd_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/papers"
)

// The fault trials run on Linux only (ppdev over FUSE), but TestMain, on
// every system, names their PE program.

// faultProgram is TestFaultTrials' PE program: sums of every PE's id+1,
// checked, 50 of them (10 beyond four PEs, whose runs are slower). With
// SPMD_FAULT set, PE 1 (the victim) fails after those in the way it names
// and the others go on until they notice; without it, every PE prints the
// last sum and returns.
func faultProgram(p *papers.PE) error {
	kind := os.Getenv("SPMD_FAULT")
	fmt.Println("ready")
	want := int32(p.PEs() * (p.PEs() + 1) / 2)
	for i := 0; ; i++ {
		s, err := papers.Reduce(p, papers.Sum, int32(p.Self()+1))
		if err != nil {
			return err
		}
		if s != want {
			fmt.Printf("sum=%d\n", s) // a wrong answer, for the test to count
			return fmt.Errorf("sum %d, want %d", s, want)
		}
		if i < 50 && p.PEs() <= 4 || i < 10 {
			continue
		}
		switch {
		case kind == "":
			fmt.Printf("sum=%d\n", s)
			return nil
		case p.Self() != faultVictim:
		case kind == "error":
			return errors.New("injected error")
		case kind == "panic":
			panic("injected panic")
		case kind == "return":
			return nil
		}
	}
}

const faultVictim = 1
