package emu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/hw"
)

// Board files: a shared board lives in a file (normally under /dev/shm)
// that the processes of one run map. It is a shared resource, treated as
// POSIX shared memory should be: the file is created with O_EXCL, mode
// 0600, complete or not at all (written under a temporary name, then
// linked); its header holds a magic number, the layout version, its size,
// the board and PE count, the creator's uid and pid and a job id drawn at
// random. Opening checks all of it before mapping a byte, and refuses a
// file of another user — root included — or one that is short, corrupt or
// not a board, saying what it found. A file shrunk while mapped makes the
// accesses fail with an error instead of SIGBUS (guard and survive).

// CreateShared creates an emulated board for pes PEs in the file at path,
// for processes to attach to with OpenShared: the same netlist and
// simulation as New, with the state in the file. The file's name must be a
// plain name (CheckName). If the file exists and belongs to a run that is
// over (its creator and every process that held a port are gone), it is
// replaced; if the run is alive, or the file is another user's or not a
// board, CreateShared fails saying so and leaves it alone. Remove the file
// when done.
func CreateShared(path string, pes int, opts ...Option) (*Board, error) {
	if err := CheckName(filepath.Base(path)); err != nil {
		return nil, err
	}
	size, err := hw.SizeFor(pes)
	if err != nil {
		return nil, err
	}
	b := compile(hw.MustNew(size), pes)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	os.Remove(tmp) // ours: left by an earlier process with our pid
	// Errors name the board and its directory, never the temporary file.
	failed := func(err error) error {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("emu: create shared board %s in directory %s: %w", filepath.Base(path), filepath.Dir(path), err)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, failed(err)
	}
	defer os.Remove(tmp)
	defer f.Close()
	if err := f.Chmod(0o600); err != nil { // whatever the umask
		return nil, failed(err)
	}
	if err := f.Truncate(int64(8 * b.lay.words)); err != nil {
		return nil, failed(err)
	}
	if err := b.mapFile(f, path); err != nil {
		return nil, err
	}
	b.start(randomJob(), opts)
	for try := 0; ; try++ {
		err := os.Link(tmp, path)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, os.ErrExist) || try > 0 {
			b.Close()
			return nil, failed(err)
		}
		if err := removeStale(path); err != nil {
			b.Close()
			return nil, err
		}
	}
}

// removeStale removes the board file at path if its run is over, and
// otherwise says why it stays.
func removeStale(path string) error {
	info, err := InspectShared(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Live() {
		return fmt.Errorf("emu: shared board %s is in use by %s: choose another name, or wait for that run to end", path, info.Users())
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("emu: remove the stale shared board: %w", err)
	}
	return nil
}

// RemoveStale removes the board file at path if it is this user's and its
// run is over, and reports whether it did. Files that are not boards,
// other users' and live runs' are left alone.
func RemoveStale(path string) bool {
	info, err := InspectShared(path)
	if err != nil || info.Live() {
		return false
	}
	return os.Remove(path) == nil
}

// OpenShared attaches to a board made by CreateShared, after checking that
// the file is this user's, complete and a board of this program's layout.
func OpenShared(path string) (*Board, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("emu: open shared board: %w", err)
	}
	defer f.Close()
	hdr, err := readHeader(f, path)
	if err != nil {
		return nil, err
	}
	size, pes := int(hdr[hSize]), int(hdr[hPEs])
	b := compile(hw.MustNew(size), pes)
	if hdr[hNets] != uint64(len(b.nets)) || hdr[hDrivers] != uint64(len(b.drivers)) || hdr[hGates] != uint64(len(b.gates)) || hdr[hFileSize] != uint64(8*b.lay.words) {
		return nil, fmt.Errorf("emu: %s was made from a different netlist (another version of this program?): make a new board", path)
	}
	if err := b.mapFile(f, path); err != nil {
		return nil, err
	}
	b.bs = newSim(b, -1)
	return b, nil
}

// readHeader checks a board file through its descriptor — owner, mode,
// size, magic, version, sizes — and returns its header words. Nothing is
// mapped, so a damaged file is an error, never a fault.
func readHeader(f *os.File, path string) ([]uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("emu: shared board %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("emu: %s is not a regular file, so not a board: choose another name", path)
	}
	if me := os.Geteuid(); int(st.Uid) != me {
		return nil, fmt.Errorf("emu: shared board %s belongs to %s, not to you (%s): boards are private to their user; choose another name", path, userName(int(st.Uid)), userName(me))
	}
	if st.Mode&0o077 != 0 {
		return nil, fmt.Errorf("emu: shared board %s has mode %#o: a board file is private to its user (0600); remove it or choose another name", path, st.Mode&0o777)
	}
	hdr := make([]uint64, headerWords)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&hdr[0])), 8*len(hdr))
	if n, _ := f.ReadAt(buf, 0); n < len(buf) {
		return nil, fmt.Errorf("emu: %s is too short to be a board (%d bytes; a board has at least %d): remove it or choose another name", path, st.Size, len(buf))
	}
	switch {
	case hdr[hMagic] != stateMagic:
		return nil, fmt.Errorf("emu: %s is not a TTL_PAPERS board (wrong magic number): remove it or choose another name", path)
	case hdr[hVersion] != stateVersion:
		return nil, fmt.Errorf("emu: %s is a board of layout version %d, this program uses version %d: make a new board with this program", path, hdr[hVersion], stateVersion)
	case hdr[hFileSize] != uint64(st.Size):
		return nil, fmt.Errorf("emu: shared board %s is truncated or corrupt (its header says %d bytes, the file has %d): remove it", path, hdr[hFileSize], st.Size)
	case hdr[hUID] != uint64(st.Uid):
		return nil, fmt.Errorf("emu: shared board %s was made by uid %d but belongs to uid %d: remove it", path, hdr[hUID], st.Uid)
	}
	size, pes := int(hdr[hSize]), int(hdr[hPEs])
	if s, err := hw.SizeFor(size); err != nil || s != size || pes < 1 || pes > size {
		return nil, fmt.Errorf("emu: %s has a corrupt header (%d PEs on a %d-PE board): remove it", path, pes, size)
	}
	return hdr, nil
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func (b *Board) mapFile(f *os.File, path string) error {
	m, err := unix.Mmap(int(f.Fd()), 0, 8*b.lay.words, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("emu: map shared board %s: %w", path, err)
	}
	b.shared, b.path = m, path
	b.m = unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), b.lay.words)
	// Keep a descriptor to check now and then that the file keeps its size.
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		unix.Munmap(m)
		return fmt.Errorf("emu: shared board %s: %w", path, err)
	}
	unix.CloseOnExec(fd)
	b.file.fd = fd
	return nil
}

// checkFile marks the board broken if its file has shrunk: within its
// first page the lost part reads as zeros instead of faulting.
func (b *Board) checkFile() {
	var st unix.Stat_t
	if b.shared == nil || unix.Fstat(b.file.fd, &st) != nil || st.Size >= int64(len(b.shared)) {
		return
	}
	err := fmt.Errorf("emu: shared board %s was truncated while in use (%d bytes, want %d): the run cannot go on", b.path, st.Size, len(b.shared))
	b.broken.CompareAndSwap(nil, &err)
}

// Close detaches from a shared board (the file stays until removed); the
// board and its ports must not be used afterwards. It does nothing for an
// in-process board.
func (b *Board) Close() error {
	if b.shared == nil {
		return nil
	}
	m := b.shared
	b.shared = nil
	b.m = nil
	unix.Close(b.file.fd)
	return unix.Munmap(m)
}

// Owner returns the pid of the process that created a shared board (for an
// in-process board, this process).
func (b *Board) Owner() int {
	defer b.survive(b.guard())
	return wordPID(b.m.load(hCreator))
}

// SharedInfo is what a board file says about its run, read without mapping
// it (InspectShared).
type SharedInfo struct {
	Path         string
	UID          int    // the creator's user id
	Creator      int    // the creator's pid
	Job          uint64 // the job id
	PEs          int    // the PE count it was created for
	Size         int    // its connectors
	CreatorAlive bool   // the creator is alive
	Holders      []int  // by PE: pid holding that PE's port, 0 if none
	Alive        []bool // by PE: whether that holder is alive
}

// Live reports whether the board's run is still going: its creator or a
// process holding one of its ports is alive.
func (i SharedInfo) Live() bool {
	if i.CreatorAlive {
		return true
	}
	for _, a := range i.Alive {
		if a {
			return true
		}
	}
	return false
}

// Users describes the run using the board: job, creator and port holders.
func (i SharedInfo) Users() string {
	s := fmt.Sprintf("job %016x (created by process %d", i.Job, i.Creator)
	if !i.CreatorAlive {
		s += ", gone"
	}
	var held []string
	for k, h := range i.Holders {
		if h != 0 && i.Alive[k] {
			held = append(held, fmt.Sprintf("PE %d pid %d", k, h))
		}
	}
	if len(held) > 0 {
		s += "; " + strings.Join(held, ", ")
	}
	return s + ")"
}

// InspectShared reads a board file's header and port claims without
// mapping it, after the checks of OpenShared.
func InspectShared(path string) (SharedInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return SharedInfo{}, err
	}
	defer f.Close()
	hdr, err := readHeader(f, path)
	if err != nil {
		return SharedInfo{}, err
	}
	size := int(hdr[hSize])
	info := SharedInfo{Path: path, UID: int(hdr[hUID]), Creator: wordPID(hdr[hCreator]), Job: hdr[hJob], PEs: int(hdr[hPEs]), Size: size,
		Holders: make([]int, size), Alive: make([]bool, size)}
	info.CreatorAlive = info.Creator != 0 && alive(hdr[hCreator])
	lay := newLayout(size)
	for k := 0; k < size; k++ {
		var w [8]byte
		if _, err := f.ReadAt(w[:], int64(8*lay.per(k, pClaim))); err != nil {
			return info, fmt.Errorf("emu: shared board %s is truncated: %w", path, err)
		}
		if h := *(*uint64)(unsafe.Pointer(&w[0])); h != 0 {
			info.Holders[k], info.Alive[k] = wordPID(h), alive(h)
		}
	}
	return info, nil
}

// alive reports whether the process of a process word exists and has not
// exited: a process killed but not yet reaped by its parent (a zombie) is
// dead, and so is one whose pid now belongs to a process started later.
// A variable, so that tests can stage a death at a chosen moment.
var alive = processAlive

// It allocates nothing: waiting PEs call it every millisecond or so.
func processAlive(w uint64) bool {
	pid := wordPID(w)
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return false
	}
	state, start, err := procStat(pid)
	if err != nil {
		return err != unix.ENOENT
	}
	return state != 'Z' && state != 'X' && (wordStart(w) == 0 || start == wordStart(w))
}

// wordStart is a process word's start time.
func wordStart(w uint64) uint64 { return w >> pidBits }

// startTime is process pid's start time, 0 if unknown.
func startTime(pid int) uint64 {
	_, start, _ := procStat(pid)
	return start
}

// procStat reads process pid's state letter and start time (fields 3 and
// 22) from /proc/pid/stat, without allocating.
func procStat(pid int) (state byte, start uint64, err error) {
	var buf [64]byte
	path := append(buf[:0], "/proc/"...)
	path = strconv.AppendInt(path, int64(pid), 10)
	path = append(path, "/stat\x00"...)
	// openat by hand: unix.Open would copy the path to the heap.
	cwd := unix.AT_FDCWD
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, 0, e
	}
	defer unix.Close(int(fd))
	var stat [1024]byte
	n, err := unix.Read(int(fd), stat[:])
	if err != nil {
		return 0, 0, err
	}
	// The fields follow the command name, which is in parentheses: the
	// state is the first, the start time the twentieth.
	i := bytes.LastIndexByte(stat[:n], ')')
	if i < 0 || i+2 >= n {
		return '?', 0, nil
	}
	state = stat[i+2]
	field := 1
	for j := i + 3; j < n && field <= 20; j++ {
		switch c := stat[j]; {
		case c == ' ':
			field++
		case field == 20 && '0' <= c && c <= '9':
			start = start*10 + uint64(c-'0')
		}
	}
	return state, start, nil
}

// Stopped reports whether process pid is stopped (SIGSTOP, a debugger):
// a launcher says so when it names a PE that holds the others up.
func Stopped(pid int) bool {
	state, _, err := procStat(pid)
	return err == nil && (state == 'T' || state == 't')
}

// boardFile is what a board keeps of its file: a descriptor, to check that
// the file keeps its size.
type boardFile struct{ fd int }
