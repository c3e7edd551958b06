package emulate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestRunPortsEndsEverything runs every way a run can end — success, a
// PE's error, a panic, a port already taken, a cancelled context, a bad
// PE count — and checks the error and that every port is released (the
// leak check in TestMain checks the goroutines).
func TestRunPortsEndsEverything(t *testing.T) {
	forever := func(p *papers.PE) error {
		for {
			if err := p.Barrier(); err != nil {
				return err
			}
		}
	}
	for _, tc := range []struct {
		name string
		ctx  func() context.Context
		hold int // a port held before the run, -1 none
		n    int
		fn   func(p *papers.PE) error
		want string // in the error; "" for none
	}{
		{"ok", context.Background, -1, 3, func(p *papers.PE) error { return p.Barrier() }, ""},
		{"error", context.Background, -1, 3, func(p *papers.PE) error {
			if p.Self() == 1 {
				return errors.New("PE 1 gives up")
			}
			return forever(p)
		}, "PE 1 gives up"},
		{"panic", context.Background, -1, 3, func(p *papers.PE) error {
			if p.Self() == 2 {
				panic("PE 2 panics")
			}
			return forever(p)
		}, "PE 2: panic: PE 2 panics"},
		{"held", context.Background, 2, 3, forever, "already open"},
		{"cancelled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx
		}, -1, 4, forever, "abandoned"},
		{"too many", context.Background, -1, 5, forever, "cannot run 5 PEs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := emu.New(min(tc.n, 4)) // the rest unplugged
			if tc.hold >= 0 {
				p, _ := b.Port(tc.hold)
				defer p.Close()
			}
			err := emulate.RunOn(b, tc.n, papers.Config{Context: tc.ctx(), Timeout: 10 * time.Second}, tc.fn)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			for k := 0; k < 4; k++ {
				if k == tc.hold {
					continue
				}
				if info := b.PortInfo(k); info.Holder != 0 {
					t.Errorf("PE %d's port still held after the run", k)
				}
			}
		})
	}
}
