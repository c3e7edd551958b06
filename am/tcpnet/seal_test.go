//go:build linux

package tcpnet

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sealedPair is a connection's two ends as frames see them: tx seals
// into its send buffer, rx checks what it sealed.
func sealedPair(tb testing.TB, mode Mode) (tx, rx *conn) {
	secret, hello, nonce := make([]byte, SecretLen), make([]byte, helloLen), make([]byte, 32)
	rand.Read(secret)
	rand.Read(hello)
	rand.Read(nonce)
	tx, rx = &conn{out: make([]byte, maxFrame)}, &conn{}
	var err error
	if tx.seal, tx.unseal, err = frameKeys(secret, hello, nonce, mode, true); err != nil {
		tb.Fatal(err)
	}
	if rx.seal, rx.unseal, err = frameKeys(secret, hello, nonce, mode, false); err != nil {
		tb.Fatal(err)
	}
	for _, c := range []*conn{tx, rx} {
		c.private = mode == Private
		if c.seal != nil {
			c.tag = tagLen
		}
	}
	return tx, rx
}

// BenchmarkSeal is what protecting a frame costs the CPU, both ends: in
// each of 3 rounds, frames of 2 argument words and payloads of 0 to 256
// KiB are written into a send buffer and checked as the receiver does,
// unprotected (a copy), authenticated and private, one after the other,
// timed by the CPU time of the thread. auth/none-N and private/none-N are
// the medians of the rounds' ratios of the CPU time per frame to
// unprotected's; auth-MB/s-N and private-MB/s-N the payload bytes one CPU
// seals and checks per second (auth-ns-0K and private-ns-0K: the CPU time
// of a frame without payload).
func BenchmarkSeal(b *testing.B) {
	const rounds = 3
	sizes := []int{0, 4 << 10, 64 << 10, MaxStaged}
	h := make([]byte, hdrLen+16)
	payload := make([]byte, MaxStaged)
	per := map[Mode]map[int][]float64{}
	runtime.LockOSThread() // timed by this thread's CPU: what it costs, whatever the load
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for range rounds {
			for _, mode := range modes {
				tx, rx := sealedPair(b, mode)
				if per[mode] == nil {
					per[mode] = map[int][]float64{}
				}
				for _, size := range sizes {
					putHeader(h, size, 1, kindPkt, []uint64{1, 2})
					count := max(64, (32<<20)/max(size, 4096))
					start := threadCPU()
					for range count {
						tx.ow = 0
						f := tx.out[:tx.put(h, payload[:size])]
						if !rx.open(f, 2, size) {
							b.Fatalf("%s: a frame of %d bytes failed its check", mode, size)
						}
					}
					per[mode][size] = append(per[mode][size], (threadCPU()-start).Seconds()/float64(count))
				}
			}
		}
	}
	for _, size := range sizes {
		name := fmt.Sprintf("%dK", size>>10)
		none := per[unprotected][size]
		for _, mode := range []Mode{Authenticated, Private} {
			short := map[Mode]string{Authenticated: "auth", Private: "private"}[mode]
			ratios := make([]float64, len(none))
			for i := range ratios {
				ratios[i] = per[mode][size][i] / none[i]
			}
			b.ReportMetric(medianOf(ratios), short+"/none-"+name)
			if size > 0 {
				b.ReportMetric(float64(size)/medianOf(per[mode][size])/1e6, short+"-MB/s-"+name)
			} else {
				b.ReportMetric(medianOf(per[mode][size])*1e9, short+"-ns-"+name)
			}
		}
	}
}

// modes are the frames' protections compared.
var modes = []Mode{unprotected, Authenticated, Private}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// threadCPU is the CPU time of the calling thread so far.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
