package lpt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

func TestStickyErrorKeepsTheFirst(t *testing.T) {
	var s lpt.StickyError
	if err := s.Err(); err != nil {
		t.Fatalf("zero value holds %v", err)
	}
	s.Set(nil)
	if err := s.Err(); err != nil {
		t.Fatalf("Set(nil) recorded %v", err)
	}
	first, second := errors.New("first"), errors.New("second")
	s.Set(first)
	s.Set(second)
	if err := s.Err(); err != first {
		t.Errorf("Err() = %v, want the first error", err)
	}
}

func TestStickyErrorConcurrent(t *testing.T) {
	var s lpt.StickyError
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		errs[i] = fmt.Errorf("error %d", i)
		wg.Go(func() { s.Set(errs[i]) })
	}
	wg.Wait()
	got := s.Err()
	for _, e := range errs {
		if got == e {
			return
		}
	}
	t.Errorf("Err() = %v, not one of the errors set", got)
}

// TestStickyErrorAllocs: a port that keeps failing must not allocate on
// every operation.
func TestStickyErrorAllocs(t *testing.T) {
	var s lpt.StickyError
	err := errors.New("broken")
	s.Set(err)
	if a := testing.AllocsPerRun(100, func() { s.Set(err); _ = s.Err() }); a != 0 {
		t.Errorf("%v allocations per Set and Err after the first error", a)
	}
}
