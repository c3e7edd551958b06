package qemu

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// The result protocol: the guest prints one console line per check,
//
//	TTLPAPERS-RESULT <name> ok|FAIL <detail>
//
// and the host parses them out of the boot noise with ParseResults.
const resultTag = "TTLPAPERS-RESULT"

// Result is one check the guest reported.
type Result struct {
	Name   string
	OK     bool
	Detail string
}

func (r Result) String() string {
	v := "ok"
	if !r.OK {
		v = "FAIL"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Name, v, r.Detail))
}

// FormatResult is the console line reporting a check: OK when err is nil,
// else failed with err's text. detail is appended either way.
func FormatResult(name string, err error, detail string) string {
	if err != nil {
		detail = strings.TrimSpace(err.Error() + " " + detail)
	}
	return FormatData(name, err == nil, strings.ReplaceAll(detail, "\n", " | "))
}

// FormatData is the console line reporting a check whose detail is data
// for the host to parse (one line of JSON): OK or failed as ok says, and
// detail as it is.
func FormatData(name string, ok bool, detail string) string {
	v := "ok"
	if !ok {
		v = "FAIL"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", resultTag, name, v, detail))
}

// ParseResults returns the results in a guest's console output, in order.
// Lines the kernel interleaved with other output are tolerated when the tag
// starts the line.
func ParseResults(console []byte) []Result {
	var rs []Result
	sc := bufio.NewScanner(bytes.NewReader(console))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(line, resultTag+" ")
		if i < 0 {
			continue
		}
		f := strings.SplitN(line[i+len(resultTag)+1:], " ", 3)
		if len(f) < 2 {
			continue
		}
		r := Result{Name: f[0], OK: f[1] == "ok"}
		if len(f) == 3 {
			r.Detail = f[2]
		}
		rs = append(rs, r)
	}
	return rs
}
