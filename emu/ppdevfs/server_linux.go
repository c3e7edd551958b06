//go:build linux

package ppdevfs

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// Server is a mounted directory of ppdev files.
type Server struct {
	dir    string
	fuse   *fuse.Server
	nodes  []*portNode
	once   sync.Once
	unmErr error
}

// Mount serves board's ports as ppdev files in dir, which must exist and be
// empty, and not be a mount point (ErrMountPoint). It first unmounts the
// boards of servers that died (SweepStale). Call Unmount when done.
func Mount(dir string, board *emu.Board, opt Options) (*Server, error) {
	n := opt.PEs
	if n == 0 {
		n = board.PEs()
	}
	if n < 1 || n > board.PEs() {
		return nil, fmt.Errorf("ppdevfs: cannot serve %d PEs from a %d-PE board: use 1 to %d", n, board.PEs(), board.PEs())
	}
	if opt.ClaimWait == 0 {
		opt.ClaimWait = time.Second
	}
	if opt.Log == nil {
		opt.Log = log.Default()
	}
	if err := checkFUSE(); err != nil {
		return nil, err
	}
	if _, err := SweepStale(); err != nil {
		opt.Log.Print(err) // another dead board's mount: not this one's problem
	}
	if err := checkMountPoint(dir); err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	for k := 0; k < n; k++ {
		s.nodes = append(s.nodes, &portNode{board: board, pe: k, opt: &opt})
	}
	root := &rootNode{nodes: s.nodes, faults: &faultsNode{board: board, log: opt.Log}}
	timeout := time.Hour // the directory never changes
	srv, err := fs.Mount(dir, root, &fs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		MountOptions: fuse.MountOptions{
			FsName: fsName,
			Name:   strings.TrimPrefix(fsType, "fuse."),
			Debug:  opt.Debug,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("ppdevfs: mounting on %s: %w\n%s", dir, err, mountAdvice(dir))
	}
	s.fuse = srv
	return s, nil
}

// checkFUSE reports what to install when FUSE cannot work here.
func checkFUSE() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("ppdevfs: /dev/fuse is missing (load the fuse module, or give the container --device /dev/fuse): %w", err)
	}
	if FusermountPath() == "" {
		return errors.New("ppdevfs: fusermount is not installed: apt-get install fuse3")
	}
	return nil
}

// mountAdvice says what to check when fusermount refused to mount: its
// own message, printed above, says which.
func mountAdvice(dir string) string {
	bin := FusermountPath()
	advice := "(fusermount's message above says why) FUSE mounts need: "
	if os.Geteuid() != 0 {
		advice += fmt.Sprintf("%s setuid root (ls -l %s; Debian's fuse3 package installs it so), "+
			"your user allowed to use it (on some systems: the fuse group), write access to %s, ", bin, bin, dir)
	}
	return advice + "and in a container --device /dev/fuse --cap-add SYS_ADMIN (and an unconfined AppArmor profile where it has one)"
}

// FusermountPath returns the fusermount program go-fuse will use, or "".
func FusermountPath() string {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Dir returns the mounted directory.
func (s *Server) Dir() string { return s.dir }

// Path returns the path of PE k's ppdev file.
func (s *Server) Path(pe int) string { return filepath.Join(s.dir, FileName(pe)) }

// Stats returns what PE k's file has served so far.
func (s *Server) Stats(pe int) Stats {
	n := s.nodes[pe]
	n.mu.Lock()
	defer n.mu.Unlock()
	st := Stats{Ioctls: n.ioctls.Load(), Unknown: n.unknown.Load(), First: n.first, Last: n.last}
	if !st.First.IsZero() {
		st.Busy = st.Last.Sub(st.First)
	}
	return st
}

// Unmount unmounts the directory and stops serving. Files still open (a
// client that was killed but not yet reaped) make a plain unmount fail; the
// mount is then detached lazily so that nothing is left behind. It is safe
// to call more than once.
func (s *Server) Unmount() error {
	s.once.Do(func() {
		if err := s.fuse.Unmount(); err != nil {
			if out, lerr := exec.Command(FusermountPath(), "-u", "-z", s.dir).CombinedOutput(); lerr != nil {
				s.unmErr = fmt.Errorf("ppdevfs: unmounting %s: %v; lazy unmount: %v: %s", s.dir, err, lerr, out)
				return
			}
		}
		s.fuse.Wait()
	})
	return s.unmErr
}

type rootNode struct {
	fs.Inode
	nodes  []*portNode
	faults *faultsNode
}

var _ fs.NodeOnAdder = (*rootNode)(nil)

func (r *rootNode) OnAdd(ctx context.Context) {
	for _, n := range r.nodes {
		ch := r.NewPersistentInode(ctx, n, fs.StableAttr{Mode: unix.S_IFREG})
		r.AddChild(FileName(n.pe), ch, false)
	}
	r.AddChild(FaultsFile, r.NewPersistentInode(ctx, r.faults, fs.StableAttr{Mode: unix.S_IFREG}), false)
}

// faultsNode is the board's faults file: reading it lists the faults the
// board has now, one a line; each line written to it is a change
// (emu.Board.Change) applied at once to the running board.
type faultsNode struct {
	fs.Inode
	board *emu.Board
	log   *log.Logger
}

var (
	_ fs.NodeOpener    = (*faultsNode)(nil)
	_ fs.NodeGetattrer = (*faultsNode)(nil)
	_ fs.NodeReader    = (*faultsNode)(nil)
	_ fs.NodeWriter    = (*faultsNode)(nil)
	_ fs.NodeSetattrer = (*faultsNode)(nil)
)

func (n *faultsNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) unix.Errno {
	out.Mode = unix.S_IFREG | 0o666
	return 0
}

// Setattr accepts the truncation of a shell's "echo PE1=unplug > faults".
func (n *faultsNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) unix.Errno {
	out.Mode = unix.S_IFREG | 0o666
	return 0
}

func (n *faultsNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, unix.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NONSEEKABLE, 0
}

func (n *faultsNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, unix.Errno) {
	var b []byte
	for _, x := range n.board.Faults() {
		b = append(b, x.String()+"\n"...)
	}
	if off >= int64(len(b)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(b[off:min(int(off)+len(dest), len(b))]), 0
}

// Write applies each line; a change the board refuses fails the write
// with EINVAL, and its reason goes to the server's log.
func (n *faultsNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, unix.Errno) {
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := n.board.Change(line); err != nil {
			n.log.Printf("ppdevfs: %s: %v", FaultsFile, err)
			return 0, unix.EINVAL
		}
	}
	return uint32(len(data)), 0
}

// portNode is PE k's file. Its register state lives in the emu.Port; the
// node adds what the PC's port hardware and the ppdev driver hold: who has
// claimed the port, and whether the data lines are tri-stated.
type portNode struct {
	fs.Inode
	board *emu.Board
	pe    int
	opt   *Options

	ioctls, unknown atomic.Uint64

	mu      sync.Mutex
	port    lpt.Port // the PE's emu.Port (wrapped by Options.Wrap), non-nil while claimed
	reverse bool     // data lines tri-stated (control bit 0x20 / PPDATADIR)
	latch   uint8    // the data latch while reversed (the board sees 0xff)
	first   time.Time
	last    time.Time
}

// handle is one open file: ppdev keeps the claim, exclusivity, mode and
// phase per open file.
type handle struct {
	node          *portNode
	claimed, excl bool
	mode, phase   int32
}

var (
	_ fs.NodeOpener    = (*portNode)(nil)
	_ fs.NodeGetattrer = (*portNode)(nil)
	_ fs.NodeReleaser  = (*portNode)(nil)
	_ fs.FileIoctler   = (*handle)(nil)
)

func (n *portNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) unix.Errno {
	out.Mode = unix.S_IFREG | 0o666
	return 0
}

func (n *portNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, unix.Errno) {
	return &handle{node: n, mode: ModeCompat}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NONSEEKABLE, 0
}

// Release drops the claim of a file closed without PPRELEASE, as ppdev does.
func (n *portNode) Release(ctx context.Context, f fs.FileHandle) unix.Errno {
	h, ok := f.(*handle)
	if !ok {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if h.claimed {
		n.releaseLocked(h)
	}
	return 0
}

// Ioctl serves one ppdev ioctl. (It is a FileIoctler rather than a
// NodeIoctler because go-fuse v2.8.0 hands NodeIoctler its internal file
// entry instead of our handle.)
func (h *handle) Ioctl(ctx context.Context, cmd uint32, arg uint64, in, out []byte) (int32, unix.Errno) {
	n := h.node
	n.ioctls.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if n.first.IsZero() {
		n.first = now
	}
	n.last = now

	if errno, done := h.session(ctx, cmd, in, out); done {
		return 0, errno
	}
	// The rest act on the port and need the claim.
	if _, known := ioctlNames[cmd]; !known {
		n.unknown.Add(1)
		n.opt.Log.Printf("ppdevfs: %s: unsupported ioctl %s: answering ENOTTY", FileName(n.pe), IoctlName(cmd))
		return 0, unix.ENOTTY
	}
	if !h.claimed {
		return 0, n.refuse(cmd, unix.EINVAL, "the port is not claimed (PPCLAIM first)")
	}
	return 0, h.portIoctl(cmd, in, out)
}

// session answers the ioctls about the open file rather than the port
// (claim, exclusivity, IEEE 1284 mode and phase); done is false for the
// others.
func (h *handle) session(ctx context.Context, cmd uint32, in, out []byte) (errno unix.Errno, done bool) {
	n := h.node
	switch cmd {
	case linuxlpt.PPCLAIM:
		return n.claimLocked(ctx, h), true
	case linuxlpt.PPEXCL:
		if h.claimed {
			return n.refuse(cmd, unix.EINVAL, "PPEXCL after PPCLAIM is too late"), true
		}
		h.excl = true // the board has no other drivers to keep out
	case linuxlpt.PPSETMODE:
		h.mode = getInt(in)
	case linuxlpt.PPGETMODE:
		putInt(out, h.mode)
	case linuxlpt.PPSETPHASE:
		h.phase = getInt(in)
	case linuxlpt.PPGETPHASE:
		putInt(out, h.phase)
	case linuxlpt.PPGETMODES:
		putInt(out, modePCSPP|modeTRISTATE)
	default:
		return 0, false
	}
	return 0, true
}

// portIoctl answers an ioctl on the claimed port.
func (h *handle) portIoctl(cmd uint32, in, out []byte) unix.Errno {
	n, p := h.node, h.node.port
	switch cmd {
	case linuxlpt.PPRELEASE:
		n.releaseLocked(h)
	case linuxlpt.PPYIELD:
		// Nobody else can be waiting while the claim is held and yielding
		// would let a concurrent PPCLAIM in; ppdev does the same when the
		// port has no waiters.
	case linuxlpt.PPWDATA:
		if n.reverse {
			n.latch = in[0]
		} else {
			p.WriteData(in[0])
		}
	case linuxlpt.PPRDATA:
		out[0] = p.ReadData()
	case linuxlpt.PPRSTATUS:
		out[0] = p.ReadStatus()
	case linuxlpt.PPWCONTROL:
		// parport_pc writes only the four control pins; bit 0x20 turns the
		// data lines around, as PPDATADIR would.
		if in[0]&0x20 != 0 {
			n.setReverseLocked(true)
		}
		p.WriteControl(in[0] & controlMask)
	case linuxlpt.PPFCONTROL:
		mask, val := in[0]&controlMask, in[1]
		p.WriteControl(p.ReadControl()&^mask | val&mask)
	case linuxlpt.PPRCONTROL:
		out[0] = p.ReadControl() & controlMask
	case linuxlpt.PPDATADIR:
		n.setReverseLocked(getInt(in) != 0)
	case linuxlpt.PPNEGOT:
		if getInt(in) != ModeCompat {
			// No IEEE 1284 peripheral answers on the board's cable.
			return unix.EIO
		}
	}
	return 0
}

// exclusiveWait bounds an exclusive claim's wait (see claimLocked).
const exclusiveWait = 100 * time.Millisecond

// claimLocked takes the PE's port for h, waiting for another open file to
// release it (ppdev blocks too) for at most ClaimWait or until the caller
// is interrupted. An exclusive claim (PPEXCL first, as papers' ports do)
// waits exclusiveWait at most: the kernel refuses to register an exclusive
// device beside another at once, and a second program on a PE's port
// should hear so now — but FUSE delivers a file's release after its close
// returns, so a program started just as the last one exited must not.
func (n *portNode) claimLocked(ctx context.Context, h *handle) unix.Errno {
	if h.claimed {
		return n.refuse(linuxlpt.PPCLAIM, unix.EINVAL, "the port is already claimed by this file")
	}
	wait := n.opt.ClaimWait
	if h.excl {
		wait = min(wait, exclusiveWait)
	}
	deadline := time.Now().Add(wait)
	for {
		p, err := n.board.Port(n.pe)
		if err == nil {
			n.port, h.claimed = p, true
			if n.opt.Wrap != nil {
				n.port = n.opt.Wrap(n.pe, p)
			}
			return 0
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return n.refuse(linuxlpt.PPCLAIM, unix.EBUSY, fmt.Sprintf("the port is held by another open file after %v (%v)", wait, err))
		}
		// Poll: the holder needs n.mu to release, and another user of the
		// board (not through this file) may hold the port.
		n.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		n.mu.Lock()
	}
}

func (n *portNode) releaseLocked(h *handle) {
	n.port.Close()
	n.port, h.claimed = nil, false
}

// setReverseLocked turns the PC's data drivers off (reverse) or on. While
// they are off the board's inputs float high and reads return the pins; the
// data latch keeps what the program writes, to reappear when they turn on.
func (n *portNode) setReverseLocked(rev bool) {
	if rev == n.reverse {
		return
	}
	if rev {
		n.latch = n.port.ReadData()
		n.port.WriteData(0xff)
	} else {
		n.port.WriteData(n.latch)
	}
	n.reverse = rev
}

func (n *portNode) refuse(cmd uint32, errno unix.Errno, why string) unix.Errno {
	n.opt.Log.Printf("ppdevfs: %s: %s refused with %v: %s", FileName(n.pe), IoctlName(cmd), errno, why)
	return errno
}

// getInt and putInt move a C int through an ioctl buffer (little-endian:
// ppdev exists on x86 and the other little-endian PC platforms only).
func getInt(b []byte) int32 {
	if len(b) < 4 {
		return 0
	}
	return int32(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

func putInt(b []byte, v int32) {
	if len(b) < 4 {
		return
	}
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
