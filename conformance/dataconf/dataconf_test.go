package dataconf_test

import (
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/conformance/dataconf"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// The cases on the in-process transport (am.NewLocal), at 2 and 4 PEs.
func TestInProcess(t *testing.T) {
	for _, n := range []int{2, 4} {
		for _, c := range dataconf.Cases() {
			if err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, c.Run); err != nil {
				t.Errorf("%d PEs: %s: %v", n, c.Name, err)
			}
		}
	}
}
