package papers

// DataNet is a PE's endpoint on a data network beside the board: the
// seeds' active messages, which Split-C's global memory and Strata's block
// transfers stand on (package am). The board carries 4 bits per barrier;
// bulk data goes another way — memory between goroutines in emulated runs,
// shared memory between processes, MPI or a LAN between PCs — and the
// runner that starts a PE (package emulate, package spmd) attaches its
// endpoint here. papers only carries it: the packages above reach it
// through their own accessor (am.Of), so that papers never imports them.
type DataNet interface {
	// Close handles what has arrived and detaches the endpoint, so that
	// the other PEs' waits on this one end in an error naming it.
	Close() error
}

// AttachDataNet gives the PE its data-network endpoint (runners call it
// once, after Open); nil detaches it.
func (p *PE) AttachDataNet(n DataNet) { p.datanet = n }

// DataNet returns the endpoint a runner attached, or nil.
func (p *PE) DataNet() DataNet { return p.datanet }
