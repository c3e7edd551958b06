package lpt

import "fmt"

// LED is a colour of a PE's bi-colour front-panel LED, as the driver sets
// it (P_LG and P_LR are bits of the data register) and as the board shows
// it. The seed (§2.2, §3.3): "green means running, red means waiting (for
// more than two 'clock' cycles), and black means not in use"; orange, both
// lines on, "is used only rarely (as a 'special' status indication)".
type LED uint8

// The colours. The values are the pair (P_LR, P_LG) as bits 1 and 0.
const (
	Dark   LED = 0 // not in use
	Green  LED = 1 // running
	Red    LED = 2 // waiting at a barrier
	Orange LED = 3 // the seed's "special" status
)

func (l LED) String() string {
	if l > Orange {
		return fmt.Sprintf("LED(%d)", uint8(l))
	}
	return [...]string{"dark", "green", "red", "orange"}[l]
}
