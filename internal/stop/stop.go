// Package stop names the signals that ask a papersctl command or a PE
// program to stop — ^C, kill, a closed terminal — and the exit status a
// shell reports for a process they end, the same on every platform.
package stop

import "os"

// Status is the exit status of a process ended by sig: 128 plus the
// signal's number, as a shell reports it (130 for ^C).
func Status(sig os.Signal) int { return 128 + number(sig) }
