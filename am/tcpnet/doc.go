// Package tcpnet is the data network of PCs on a real board: active
// messages (package am) over TCP on the LAN the PCs share, pure Go.
//
// Each PE listens (Listen, before papers.Open); after the board's
// check-in the PEs exchange a per-run secret and their addresses over the
// board itself (Join), then connect: one connection per pair of PEs and
// network, each proving the secret in a challenge–response handshake
// before it carries a message. Requests and replies (am.Left, am.Right)
// go in frames on their network's connection, each authenticated under
// keys of the run and the connection (and encrypted too with
// PAPERS_LAN=private: Mode); a frame that fails is never handled, and
// names its sender (ErrForged). A payload longer than
// am.MaxMedium travels in its frame (am.Stager), up to MaxStaged bytes.
// There is no one-sided access (am.Direct): Split-C's reads, writes and
// atomics are served by the owner's handlers.
//
// A PE that leaves sends a departure on each connection, with the count of
// packets it took; a PE whose process dies is named when its connections
// end; one that stops, or whose link is down, by the waits on it, after
// the timeout. docs/datanet.md ("A real board") explains it.
package tcpnet
