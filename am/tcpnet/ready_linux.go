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
	asked   time.Time          // the kernel's last answer
	looked  bool               // and no poll has found nothing since
	ev      unix.EpollEvent    // epoll_ctl's argument, kept here: no allocation per call
	once    func(uintptr) bool // r.pollOnce, made once: a method value per wait would allocate
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
	r.once = r.pollOnce
	r.closing = make(chan struct{})
	return nil
}

// A poll that finds nothing read asks the kernel which connections have
// bytes, unless the look before it did (the poll of the other network,
// or the wait's look when it woke): then the next one asks. A look at the
// departures (Gone) asks unless the kernel answered within lookEvery: a
// departure seen that much later is still seen long before any wait on
// it ends, and a wait asks the kernel itself before it sleeps. So a poll
// of both networks, the look at the departures before a sleep and a roll
// call's or a barrier's look at every PE make one epoll_wait, not one
// each: a round trip of 2 PEs made 8.9 epoll_waits, not 14.7 (the
// runtime's own included), and a wait on any PE no longer one per PE.
const lookEvery = 50 * time.Microsecond

// poll is fill for a poll that found nothing.
func (r *readiness) poll() int {
	if r.looked {
		r.looked = false
		return 0
	}
	return r.fill()
}

// look is fill for a look at the departures.
func (r *readiness) look() {
	if time.Since(r.asked) >= lookEvery {
		r.fill()
	}
}

// fill reads every connection the kernel says has bytes, and flushes every
// one it says has room, and returns how many it named.
func (r *readiness) fill() int {
	r.asked, r.looked = time.Now(), true
	n, err := unix.EpollWait(r.fd, r.events, 0)
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

// pollOnce is the netpoller's look, before the wait sleeps and when it
// wakes: always the kernel's answer.
func (r *readiness) pollOnce(uintptr) bool { return r.fill() > 0 }

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
	r.rc.Read(r.once) // its error is the deadline's
}

func (r *readiness) close() {
	if r.f != nil {
		close(r.closing)
		r.f.Close()
		r.f = nil
	}
}
