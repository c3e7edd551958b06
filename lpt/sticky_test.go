package lpt_test

import (
	"errors"
	"fmt"
	"slices"
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

// TestStickyErrorConcurrent: goroutines racing to Set different errors
// all read back one and the same, one of theirs, and it never changes:
// each reads after its own Set, so none may see nil or another error.
func TestStickyErrorConcurrent(t *testing.T) {
	for range 100 {
		var s lpt.StickyError
		errs, seen := make([]error, 8), make([]error, 8)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range errs {
			errs[i] = fmt.Errorf("error %d", i)
			wg.Go(func() {
				<-start
				s.Set(errs[i])
				seen[i] = s.Err()
			})
		}
		close(start)
		wg.Wait()
		kept := s.Err()
		if !slices.Contains(errs, kept) {
			t.Fatalf("Err() = %v, not one of the errors set", kept)
		}
		for i, e := range seen {
			if e != kept {
				t.Fatalf("goroutine %d read %v after its Set, the others %v: the first error must stay", i, e, kept)
			}
		}
	}
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
