//go:build !linux

package tcpnet

import (
	"errors"
	"net/netip"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// MaxStaged is the most payload one packet carries.
const MaxStaged = 256 << 10

var errUnsupported = errors.New("tcpnet: the TCP data network runs on Linux only")

// Listener is a PE's listening socket (Linux only).
type Listener struct{ Mode Mode }

// Net is a PE's side of the data network (Linux only: Join never
// returns one).
type Net struct{ am.Transport }

func (*Net) Close() error { return nil }

// Listen fails: Linux only.
func Listen(string) (*Listener, error) { return nil, errUnsupported }

func (*Listener) Addr() netip.AddrPort { return netip.AddrPort{} }
func (*Listener) Close() error         { return nil }
func (*Listener) Join(*papers.PE, time.Duration) (*Net, error) {
	return nil, errUnsupported
}
