package testenv

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that several writers (PEs, a launcher's output
// copiers) and a test reading it may use at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
