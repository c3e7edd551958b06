package am

// SetProcessEnded replaces how the shared-memory transport sees a process
// end, until the returned restore is called.
func SetProcessEnded(f func(pid int32) bool) (restore func()) {
	old := processEnded
	processEnded = func(_ *Shared, _ int, pid int32) bool { return f(pid) }
	return func() { processEnded = old }
}
