package emu

import (
	"testing"
	"time"
)

// TestDeadPartnerClosedThenExited stages the race a liveness check can
// meet: the partner closes its port and exits between the check's read of
// the claim and its look at the process. That PE finished cleanly and must
// not be blamed; one that died still holding its port must be.
func TestDeadPartnerClosedThenExited(t *testing.T) {
	b, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	p1 := b.ports[1]
	const other = 1<<22 + 7 // not this process
	defer func(f func(uint64) bool) { alive = f }(alive)

	b.m.store(b.lay.per(1, pClaim), other)
	alive = func(uint64) bool { b.release(p1); return false } // closes, then exits
	if pe, why := b.deadPartner(1); pe >= 0 {
		t.Errorf("a PE that closed its port before exiting was blamed: %s", why)
	}

	b.m.store(b.lay.per(1, pClaim), other)
	alive = func(uint64) bool { return false } // died holding it
	if pe, why := b.deadPartner(1); pe != 1 {
		t.Errorf("a PE that died holding its port: deadPartner = %d %q, want PE 1", pe, why)
	}
}

// waitFor waits until cond holds, failing the test after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDeadWaiterBlamesLatePEs: a PE that timed out waiting for others and
// exited holding its port is found dead, but the board blames the PEs it
// was waiting for.
func TestDeadWaiterBlamesLatePEs(t *testing.T) {
	b, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	defer func(f func(uint64) bool) { alive = f }(alive)
	b.m.store(b.lay.per(1, pClaim), 1<<22+7)
	b.m.store(b.lay.per(1, pStalled), 1<<2+1) // PE 1 found PE 2 late
	alive = func(uint64) bool { return false }
	if pe, why := b.deadPartner(1); pe != 2 || why != "PE 2 did not arrive at a barrier: PE 1 waited until its timeout and exited" {
		t.Errorf("deadPartner = %d %q, want PE 2 blamed", pe, why)
	}
}
