package am

// Stager is implemented by a transport that carries payloads longer than
// MaxMedium in one packet: the in-process and shared-memory ones stage
// them in rings beside the inbox (above); a stream transport (TCP) sends
// them in the packet's frame and hands the receiver the bytes where they
// arrived. The endpoint's MaxPayload is then MaxStaged.
type Stager interface {
	// MaxStaged is the most payload bytes one staged packet carries.
	MaxStaged() int
	// SendStaged is Send with payload (longer than MaxMedium) carried
	// beside the packet (p.Len 0): false when there is no room yet.
	SendStaged(dst int, p *Packet, payload []byte) (bool, error)
	// Staged is the payload of a staged packet Recv returned (p.Staged
	// bytes), valid until Unstage frees it; no Recv comes between.
	Staged(p *Packet) []byte
	Unstage(p *Packet)
}

// Placer names the memory a long payload of its handler's messages
// belongs in, from the message's source, arguments and payload length
// (Endpoint.Place): nil when it has none. A transport that can (Placing)
// then reads the payload straight there, not into a buffer of its own
// for the handler to copy out of, and the handler's Msg.Payload is that
// memory: its copy would be onto itself, and it skips it. A payload that
// fails its check there is zeroed, and the run fails: its handler never
// runs.
type Placer func(src int, a Args, n int) []byte

// Placing is implemented by a Stager that reads long payloads into the
// memory their handlers' Placers name.
type Placing interface {
	// SetPlacer gives the transport the endpoint's lookup: the memory
	// for a long payload of n bytes from PE src to handler h, or nil.
	SetPlacer(place func(src int, h HandlerID, a Args, n int) []byte)
}

// Place names where the long payloads of handler id's messages go (see
// Placer). On a transport that cannot place them it does nothing.
func (e *Endpoint) Place(id HandlerID, p Placer) {
	if e.places == nil {
		e.places = map[HandlerID]Placer{}
	}
	e.places[id] = p
}

// place is the endpoint's lookup for a Placing transport.
func (e *Endpoint) place(src int, h HandlerID, a Args, n int) []byte {
	if p := e.places[h]; p != nil {
		return p(src, a, n)
	}
	return nil
}
