//go:build !unix

package stop

import "os"

// Signals is ^C (os.Interrupt), the one stop signal every platform has.
var Signals = []os.Signal{os.Interrupt}

func number(os.Signal) int { return 2 } // SIGINT's number, as on Unix
