package ppdevfs

// Available reports what to install when FUSE cannot serve a board here,
// so that a command can refuse before slow preparations.
func Available() error { return checkFUSE() }
