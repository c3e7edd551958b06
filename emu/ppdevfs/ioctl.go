package ppdevfs

import "fmt"

// Linux ppdev ioctl numbers (<linux/ppdev.h>). golang.org/x/sys/unix
// defines none of them. The argument of each is a pointer to the value;
// restricted FUSE ioctls copy exactly the size encoded in the number.
const (
	PPSETMODE  = 0x40047080 // _IOW('p', 0x80, int)
	PPRSTATUS  = 0x80017081 // _IOR('p', 0x81, unsigned char)
	PPRCONTROL = 0x80017083 // _IOR('p', 0x83, unsigned char)
	PPWCONTROL = 0x40017084 // _IOW('p', 0x84, unsigned char)
	PPRDATA    = 0x80017085 // _IOR('p', 0x85, unsigned char)
	PPWDATA    = 0x40017086 // _IOW('p', 0x86, unsigned char)
	PPCLAIM    = 0x0000708b // _IO('p', 0x8b)
	PPRELEASE  = 0x0000708c // _IO('p', 0x8c)
	PPYIELD    = 0x0000708d // _IO('p', 0x8d)
	PPFCONTROL = 0x4002708e // _IOW('p', 0x8e, struct ppdev_frob_struct{mask, val})
	PPEXCL     = 0x0000708f // _IO('p', 0x8f)
	PPDATADIR  = 0x40047090 // _IOW('p', 0x90, int)
	PPNEGOT    = 0x40047091 // _IOW('p', 0x91, int)
	PPSETPHASE = 0x40047094 // _IOW('p', 0x94, int)
	PPGETMODES = 0x80047097 // _IOR('p', 0x97, unsigned int)
	PPGETMODE  = 0x80047098 // _IOR('p', 0x98, int)
	PPGETPHASE = 0x80047099 // _IOR('p', 0x99, int)
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

var ioctlNames = map[uint32]string{
	PPSETMODE: "PPSETMODE", PPRSTATUS: "PPRSTATUS", PPRCONTROL: "PPRCONTROL",
	PPWCONTROL: "PPWCONTROL", PPRDATA: "PPRDATA", PPWDATA: "PPWDATA",
	PPCLAIM: "PPCLAIM", PPRELEASE: "PPRELEASE", PPYIELD: "PPYIELD",
	PPFCONTROL: "PPFCONTROL", PPEXCL: "PPEXCL", PPDATADIR: "PPDATADIR",
	PPNEGOT: "PPNEGOT", PPSETPHASE: "PPSETPHASE", PPGETMODES: "PPGETMODES",
	PPGETMODE: "PPGETMODE", PPGETPHASE: "PPGETPHASE",
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
