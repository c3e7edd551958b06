package gpiomap

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// RaspberryPi is the mapping for a Raspberry Pi's 40-pin header (BCM GPIO
// names): the wiring docs/hardware.md tabulates and the Pi adapter board
// (kicad/ttl_papers_pi) is built for, and the mapping to give the gpio: port
// spec on a Pi. Every pin is a plain GPIO on
// gpiochip0, so a register write is one bulk write; none is one of the
// header's I²C, SPI or UART pins. ParseMapping reads it by name, PiName, so
// the port spec on a Pi is gpio:pi.
var RaspberryPi = mustParse("nStrobe=GPIO4,D0=GPIO17,D1=GPIO18,D2=GPIO27,D3=GPIO22,D4=GPIO23,D5=GPIO24,D6=GPIO25,D7=GPIO5," +
	"nAck=GPIO6,Busy=GPIO12,PaperOut=GPIO13,Select=GPIO19,nAutoFd=GPIO16,nError=GPIO26,nInit=GPIO20,nSelectIn=GPIO21")

// PiName is RaspberryPi's name in a mapping or port spec: gpio:pi.
const PiName = "pi"

func mustParse(s string) Mapping {
	m, err := parse(s)
	if err != nil {
		panic(err)
	}
	return m
}

// PiHeader is where the Raspberry Pi's 40-pin header (every model since
// the B+) has each BCM GPIO: header pin by GPIO name.
var PiHeader = map[string]int{
	"GPIO2": 3, "GPIO3": 5, "GPIO4": 7, "GPIO14": 8, "GPIO15": 10, "GPIO17": 11, "GPIO18": 12, "GPIO27": 13,
	"GPIO22": 15, "GPIO23": 16, "GPIO24": 18, "GPIO10": 19, "GPIO9": 21, "GPIO25": 22, "GPIO11": 23, "GPIO8": 24,
	"GPIO7": 26, "GPIO0": 27, "GPIO1": 28, "GPIO5": 29, "GPIO6": 31, "GPIO12": 32, "GPIO13": 33, "GPIO19": 35,
	"GPIO16": 36, "GPIO26": 37, "GPIO20": 38, "GPIO21": 40,
}

// The Pi header's supply pins.
var (
	PiGround = []int{6, 9, 14, 20, 25, 30, 34, 39}
	Pi3V3    = []int{1, 17}
	Pi5V     = []int{2, 4}
)

// HeaderPins returns the Pi header pin of each line of m, indexed like
// lpt.Lines (0 where m leaves the line unconnected), or an error naming a
// pin that is not one of the header's GPIOs.
func (m Mapping) HeaderPins() ([len(lpt.Lines)]int, error) {
	var out [len(lpt.Lines)]int
	for i, name := range m {
		if name == "" {
			continue
		}
		p, ok := PiHeader[name]
		if !ok {
			return out, fmt.Errorf("gpiomap: %s is not a GPIO on the Raspberry Pi's 40-pin header (use BCM names, GPIO0 to GPIO27)", name)
		}
		out[i] = p
	}
	return out, nil
}
