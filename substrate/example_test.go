package substrate_test

import (
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/substrate"
)

// loopback is a driver of specs "loop:…" that refuses to open: a real one
// opens its substrate and returns the checked-in PE in a Session.
type loopback struct{}

func (loopback) Check(spec string) error {
	if spec == "loop:" {
		return errors.New("loop: name a loop, as loop:NAME")
	}
	return nil
}

func (loopback) Open(spec string, o substrate.Options) (substrate.Session, error) {
	return nil, fmt.Errorf("loop: PE %d of %d: %s is only an example", o.PE, o.PEs, spec)
}

// A driver registers from its package's init; package spmd then finds it
// by the name its specs start with.
func ExampleRegister() {
	substrate.Register("loop", loopback{})
	d, err := substrate.Lookup("loop:a")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Check("loop:"))
	_, err = d.Open("loop:a", substrate.Options{PE: 1, PEs: 4})
	fmt.Println(err)
	// Output:
	// loop: name a loop, as loop:NAME
	// loop: PE 1 of 4: loop:a is only an example
}
