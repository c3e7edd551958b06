package backend

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseBase: ParseBase never panics, accepts only addresses that leave
// room for the port's three registers, and reads its own "%#x" back.
func FuzzParseBase(f *testing.F) {
	for _, s := range []string{"0x378", "378", "LPT3", "0X3BC", "lpt1", "0x278", "0xfffd", "0xfffe", "0x", "", "zz", "-1", "+378"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBase(s)
		if err != nil {
			if !strings.Contains(err.Error(), "0x378") {
				t.Fatalf("ParseBase(%q): %v does not say what to write", s, err)
			}
			return
		}
		if b > 0xfffd {
			t.Fatalf("ParseBase(%q) = %#x: no room for three registers", s, b)
		}
		if c, err := ParseBase(fmt.Sprintf("%#x", b)); err != nil || c != b {
			t.Fatalf("ParseBase(%q) = %#x, which reads back as %#x, %v", s, b, c, err)
		}
	})
}

// FuzzCheck: Check never panics, accepts only the four kinds (in full or
// short form, which Canonical writes in full), and agrees with ParseBase on
// the address kinds.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"port:0x378", "ppdev:/dev/parport0", "devport:0x378", "gpio:D0=GPIO17", "port:lpt2",
		"gpio:nStrobe=GPIO4,D0=GPIO17,D1=GPIO18,D2=GPIO27,D3=GPIO22,D4=GPIO23,D5=GPIO24,D6=GPIO25,D7=GPIO5,nAck=GPIO6,Busy=GPIO12,PaperOut=GPIO13,Select=GPIO19,nAutoFd=GPIO16,nError=GPIO26,nInit=GPIO20",
		"0x378", "port:", "serial:/dev/ttyS0", "shm:/dev/shm/papers-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check(s)
		if err != nil {
			return
		}
		c, err := Canonical(s)
		if err != nil {
			t.Fatalf("Check(%q) accepts what Canonical refuses: %v", s, err)
		}
		kind, arg, _ := strings.Cut(c, ":")
		switch kind {
		case KindDirect, KindDevPort:
			if _, perr := ParseBase(arg); perr != nil {
				t.Fatalf("Check(%q) accepts a base ParseBase refuses: %v", s, perr)
			}
		case KindPPDev, KindGPIO:
			if arg == "" {
				t.Fatalf("Check(%q) accepts an empty %s", s, kind)
			}
		default:
			t.Fatalf("Check(%q) accepts kind %q", s, kind)
		}
	})
}
