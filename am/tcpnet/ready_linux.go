package tcpnet

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readiness is the kernel's word on a Net's connections: an epoll set of
// them, level-triggered for bytes to read (and for room to write, while a
// send buffer waits). A poll asks it once which connections to read, so
// its cost does not grow with the PE count; a wait sleeps on the set
// itself in Go's netpoller, as a net.Conn's read sleeps, and wakes when
// any connection has bytes or room.
type readiness struct {
	t       *Net
	fd      int
	f       *os.File // fd, for the netpoller's parking and deadline
	rc      syscall.RawConn
	events  []unix.EpollEvent
	ev      unix.EpollEvent    // epoll_ctl's argument, kept here: no allocation per call
	poll    func(uintptr) bool // r.pollOnce, made once: a method value per wait would allocate
	watched <-chan struct{}    // the done channel a goroutine watches for the waits
	closing chan struct{}
}

const watchIn = unix.EPOLLIN | unix.EPOLLRDHUP

func (r *readiness) open(t *Net) error {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	r.t, r.fd = t, fd
	for i, c := range t.pconn {
		c.idx = int32(i)
		r.ev = unix.EpollEvent{Events: watchIn, Fd: c.idx}
		if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, c.fd, &r.ev); err != nil {
			unix.Close(fd)
			return err
		}
		c.watched = true
	}
	// Non-blocking, so that os.NewFile hands it to the netpoller.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	r.f = os.NewFile(uintptr(fd), "epoll")
	if r.rc, err = r.f.SyscallConn(); err != nil {
		r.f.Close()
		return err
	}
	r.events = make([]unix.EpollEvent, max(len(t.pconn), 1))
	r.poll = r.pollOnce
	r.closing = make(chan struct{})
	return nil
}

// fill reads every connection the kernel says has bytes, and flushes every
// one it says has room, and returns how many it named.
func (r *readiness) fill(timeout int) int {
	n, err := unix.EpollWait(r.fd, r.events, timeout)
	if err != nil || n <= 0 {
		return 0
	}
	for _, ev := range r.events[:n] {
		c := r.t.pconn[ev.Fd]
		if ev.Events&unix.EPOLLOUT != 0 && c.ow > c.or && c.eof == nil {
			r.t.flush(c) // an error is the peer's departure, which Gone reports
		}
		if ev.Events&^unix.EPOLLOUT != 0 {
			c.fill()
		}
		if c.eof != nil { // level-triggered, an ended stream would wake every wait
			r.unwatch(c)
		}
	}
	return n
}

func (r *readiness) pollOnce(uintptr) bool { return r.fill(0) > 0 }

// watch asks the kernel to report c writable too (out), or no longer.
func (r *readiness) watch(c *conn, out bool) {
	if c.wantOut == out || !c.watched {
		return
	}
	c.wantOut = out
	r.ev = unix.EpollEvent{Events: watchIn, Fd: c.idx}
	if out {
		r.ev.Events |= unix.EPOLLOUT
	}
	unix.EpollCtl(r.fd, unix.EPOLL_CTL_MOD, c.fd, &r.ev)
}

func (r *readiness) unwatch(c *conn) {
	if c.watched {
		unix.EpollCtl(r.fd, unix.EPOLL_CTL_DEL, c.fd, &r.ev)
		c.watched = false
	}
}

// wait sleeps until the set has an event, d passes or done is closed. A
// goroutine per done channel (one per endpoint, in practice) ends a sleep
// when it closes, by moving the deadline.
func (r *readiness) wait(d time.Duration, done <-chan struct{}) {
	if done != nil && done != r.watched {
		r.watched = done
		f := r.f
		go func() {
			select {
			case <-done:
				f.SetReadDeadline(time.Unix(1, 0))
			case <-r.closing:
			}
		}()
	}
	r.f.SetReadDeadline(time.Now().Add(d))
	select { // after the deadline is set: a done closed later moves it
	case <-done:
		return
	default:
	}
	r.rc.Read(r.poll) // its error is the deadline's
}

func (r *readiness) close() {
	if r.f != nil {
		close(r.closing)
		r.f.Close()
		r.f = nil
	}
}
