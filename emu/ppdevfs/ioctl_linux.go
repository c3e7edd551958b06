package ppdevfs

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// IEEE 1284 modes (<linux/parport.h>) used by PPSETMODE, PPNEGOT and PPGETMODE.
const (
	ModeCompat = 1 << 8 // IEEE1284_MODE_COMPAT: plain SPP, the only mode the board speaks
	ModeEPP    = 1 << 6 // IEEE1284_MODE_EPP
)

// Port capabilities PPGETMODES reports: a PC-style SPP port that can
// tri-state its data lines (a PS/2 bidirectional port), as parport_pc finds
// on a common motherboard port.
const (
	modePCSPP    = 1 << 0 // PARPORT_MODE_PCSPP
	modeTRISTATE = 1 << 1 // PARPORT_MODE_TRISTATE
)

// controlMask is what parport_pc lets PPWCONTROL, PPFCONTROL and PPRCONTROL
// touch: the four control pins (bit 0x20, direction, is PPDATADIR's job).
const controlMask = 0x0f

// ioctlNames names the ppdev requests (linuxlpt.PPWDATA, ...) this package serves.
var ioctlNames = map[uint32]string{
	linuxlpt.PPSETMODE: "PPSETMODE", linuxlpt.PPRSTATUS: "PPRSTATUS", linuxlpt.PPRCONTROL: "PPRCONTROL",
	linuxlpt.PPWCONTROL: "PPWCONTROL", linuxlpt.PPRDATA: "PPRDATA", linuxlpt.PPWDATA: "PPWDATA",
	linuxlpt.PPCLAIM: "PPCLAIM", linuxlpt.PPRELEASE: "PPRELEASE", linuxlpt.PPYIELD: "PPYIELD",
	linuxlpt.PPFCONTROL: "PPFCONTROL", linuxlpt.PPEXCL: "PPEXCL", linuxlpt.PPDATADIR: "PPDATADIR",
	linuxlpt.PPNEGOT: "PPNEGOT", linuxlpt.PPSETPHASE: "PPSETPHASE", linuxlpt.PPGETMODES: "PPGETMODES",
	linuxlpt.PPGETMODE: "PPGETMODE", linuxlpt.PPGETPHASE: "PPGETPHASE",
}

// IoctlName names an ioctl number: its ppdev name, or its decoded _IOC
// fields when it is not one this package serves.
func IoctlName(cmd uint32) string {
	if n, ok := ioctlNames[cmd]; ok {
		return n
	}
	dir := [...]string{"_IO", "_IOW", "_IOR", "_IOWR"}[cmd>>30]
	return fmt.Sprintf("%#08x (%s(%q, %#x, %d bytes))", cmd, dir, rune(cmd>>8&0xff), cmd&0xff, cmd>>16&0x3fff)
}
