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
