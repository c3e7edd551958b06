package testenv

import "fmt"

// Pattern is byte j of payload i in the data network's staging tests: a
// payload out of place or out of order differs from its own.
func Pattern(i, j int) byte { return byte(i*31 + j*7 + j>>8) }

// CheckPayload reports the first byte of b that is not payload i's.
func CheckPayload(i int, b []byte) error {
	for j := range b {
		if b[j] != Pattern(i, j) {
			return fmt.Errorf("payload %d (%d bytes): byte %d is %d, want %d", i, len(b), j, b[j], Pattern(i, j))
		}
	}
	return nil
}
