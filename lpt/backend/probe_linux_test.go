package backend_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// TestProbe runs the probe on this machine: every method is tried on at
// least one port, and each failure says what went wrong.
func TestProbe(t *testing.T) {
	r := backend.Probe()
	kinds := map[string]bool{}
	for _, a := range r.Attempts {
		kind, _, _ := strings.Cut(a.Spec, ":")
		kinds[kind] = true
		var ae *linuxlpt.AccessError
		if a.Err != nil && !errors.As(a.Err, &ae) {
			t.Errorf("%s: %v is not an *linuxlpt.AccessError", a.Spec, a.Err)
		}
		t.Logf("%s: %v", a.Spec, a.Err)
	}
	for _, k := range []string{backend.KindDirect, backend.KindPPDev, backend.KindDevPort} {
		if !kinds[k] {
			t.Errorf("probe never tried %s", k)
		}
	}
	if r.GPIO == "" {
		t.Error("probe says nothing about GPIO")
	}
}
