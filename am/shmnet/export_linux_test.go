package shmnet

// SetProcessEnded replaces how the transport sees a process end, until the
// returned restore is called.
func SetProcessEnded(f func(pid int32) bool) (restore func()) {
	old := processEnded
	processEnded = func(_ *Net, _ int, pid int32) bool { return f(pid) }
	return func() { processEnded = old }
}
