package linuxlpt

// Linux ppdev ioctl requests (<linux/ppdev.h>); golang.org/x/sys/unix
// defines none of them. The argument of each is a pointer to the value (one
// byte of raw register bits for the register requests); the size is encoded
// in the number. OpenPPDev issues them, and package emu/ppdevfs answers
// them for an emulated board.
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
