package tcpnet

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// The frames' protection (docs/datanet.md, "Transports": a real board). Each
// connection has a key per direction, AES-128-GCM, derived from the run's
// secret and the connection's handshake (both nonces): no key serves two
// connections or directions, so a frame moved to another connection, or
// sent back, fails. The nonce is the frame's number on its connection and
// direction, counted by both ends and never sent: a frame replayed,
// dropped or reordered is checked under another number and fails.
//
// A frame is sealed in two parts, each under its own nonce (the frame's
// number, part 0 or 1): the header with the argument words, then the
// payload, each followed by its 16-byte tag. Two parts, not one, so that
// a long payload is sealed where it lies, in the caller's memory, and
// leaves by writev as before; the header's part carries the payload's
// length, so neither part can be cut or swapped. Authenticated, the parts
// are associated data only (GMAC); private, they are encrypted, the
// 8-byte header excepted: the receiver needs the frame's length.
const tagLen = 16

// frameKeys are a connection's sealers, from the run's secret and the
// handshake's transcript (hello and the listener's nonce): nil, nil when
// mode is unprotected.
func frameKeys(secret, hello, nonce []byte, mode Mode, dialer bool) (tx, rx cipher.AEAD, err error) {
	if mode == unprotected {
		return nil, nil, nil
	}
	salt := append(append([]byte(nil), hello...), nonce...)
	aead := func(dir string) (cipher.AEAD, error) {
		key, err := hkdf.Key(sha256.New, secret, salt, magic+" frames "+dir+" "+mode.String(), 16)
		if err != nil {
			return nil, err
		}
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	}
	d, err := aead("D") // the dialer's frames
	if err != nil {
		return nil, nil, err
	}
	a, err := aead("A")
	if err != nil {
		return nil, nil, err
	}
	if dialer {
		return d, a, nil
	}
	return a, d, nil
}

// frameLen is a frame's length on c: the header with nargs argument
// words, a payload of n bytes, and their tags.
func (c *conn) frameLen(nargs, n int) int {
	if c.tag == 0 || n == 0 {
		return hdrLen + 8*nargs + c.tag + n
	}
	return hdrLen + 8*nargs + 2*c.tag + n
}

// setNonce makes c.nonce frame seq's, for part.
func (c *conn) setNonce(seq uint64, part byte) []byte {
	binary.LittleEndian.PutUint64(c.nonce[:], seq)
	c.nonce[8] = part
	return c.nonce[:]
}

// put writes the frame of header h (with its argument words) and payload
// into c's send buffer at c.ow, sealed, and returns its length; the
// caller has made room (frameLen).
func (c *conn) put(h, payload []byte) int {
	o := c.out[c.ow:]
	if c.seal == nil {
		n := copy(o, h)
		return n + copy(o[n:], payload)
	}
	copy(o, h[:hdrLen])
	at := len(h) + tagLen
	if c.private {
		c.seal.Seal(o[hdrLen:hdrLen], c.setNonce(c.txSeq, 0), h[hdrLen:], h[:hdrLen])
	} else {
		copy(o[hdrLen:], h[hdrLen:])
		c.seal.Seal(o[len(h):len(h)], c.setNonce(c.txSeq, 0), nil, h)
	}
	if len(payload) > 0 {
		if c.private { // the cipher's output is the copy
			c.seal.Seal(o[at:at], c.setNonce(c.txSeq, 1), payload, nil)
		} else {
			copy(o[at:], payload)
			c.seal.Seal(o[at+len(payload):at+len(payload)], c.setNonce(c.txSeq, 1), nil, payload)
		}
	}
	c.txSeq++
	return c.frameLen((len(h)-hdrLen)/8, len(payload))
}

// sealApart seals an authenticated frame whose payload stays where it is
// (writev): h's tag goes after it in h's array (its capacity), the
// payload's in tag. It returns h with its tag, and tag's part used.
func (c *conn) sealApart(h, payload []byte, tag *[tagLen]byte) ([]byte, []byte) {
	if c.seal == nil {
		return h, tag[:0]
	}
	h = c.seal.Seal(h, c.setNonce(c.txSeq, 0), nil, h)
	c.seal.Seal(tag[:0], c.setNonce(c.txSeq, 1), nil, payload)
	c.txSeq++
	return h, tag[:]
}

// open checks the whole frame f, with nargs argument words and n payload
// bytes, and decrypts it in place if private: false if it is forged.
func (c *conn) open(f []byte, nargs, n int) bool {
	if c.seal == nil {
		return true
	}
	if !c.openHead(f, nargs) {
		return false
	}
	if n > 0 {
		a := hdrLen + 8*nargs
		p := f[a+tagLen : a+2*tagLen+n]
		var err error
		if c.private {
			_, err = c.unseal.Open(p[:0], c.setNonce(c.rxSeq, 1), p, nil)
		} else {
			_, err = c.unseal.Open(nil, c.setNonce(c.rxSeq, 1), p[n:], p[:n])
		}
		if err != nil {
			return false
		}
	}
	c.rxSeq++
	return true
}

// openHead checks the header part of the frame at f's start, with nargs
// argument words, and decrypts it in place if private: false if it is
// forged. The frame's number stays: its payload is checked under it.
func (c *conn) openHead(f []byte, nargs int) bool {
	a := hdrLen + 8*nargs
	var err error
	if c.private {
		_, err = c.unseal.Open(f[hdrLen:hdrLen], c.setNonce(c.rxSeq, 0), f[hdrLen:a+tagLen], f[:hdrLen])
	} else {
		_, err = c.unseal.Open(nil, c.setNonce(c.rxSeq, 0), f[a:a+tagLen], f[:a])
	}
	return err == nil
}

// forged is the error of c's stream once a frame on it failed: what, and
// that the link is cut.
func (c *conn) forged(what string) error {
	return fmt.Errorf("%w: frame %d on network %d from PE %d %s: it was altered, injected, replayed or cut short on the LAN; the frame is dropped and the link treated as cut", ErrForged, c.rxSeq, c.net, c.peer, what)
}
