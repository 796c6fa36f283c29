package strace_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/iosim/iosim/strace"
)

func Example() {
	const trace = `24494 01:29:18.997074 openat(AT_FDCWD, "t.dat", O_WRONLY|O_CREAT|O_APPEND, 0644) = 3 <0.000040>
24494 01:29:18.997101 write(3, "hello\n", 6 <unfinished ...>
24495 01:29:18.997102 close(9) = -1 EBADF (Bad file descriptor) <0.000003>
24494 01:29:18.997130 <... write resumed>) = 6 <0.000031>
`
	p := strace.NewParser(strings.NewReader(trace), "example.strace", strace.Options{})
	for {
		ev, err := p.Next() // ev is valid until the next call of Next
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		switch ev.Name {
		case "openat":
			flags, _ := ev.Flags(2)
			path, _, _ := ev.Str(1)
			fmt.Printf("line %d pid %d: open %q flags %#o = %d\n", ev.Line, ev.Pid, path, flags, ev.Ret)
		case "write":
			fd, _, _ := ev.Fd(0)
			data, truncated, _ := ev.Str(1)
			fmt.Printf("lines %d-%d pid %d: write(%d, %q, truncated=%v) = %d\n", ev.Line, ev.EndLine, ev.Pid, fd, data, truncated, ev.Ret)
		default:
			fmt.Printf("line %d pid %d: %s failed with %s (%d)\n", ev.Line, ev.Pid, ev.Name, ev.ErrnoName, ev.Errno)
		}
	}
	// Output:
	// line 1 pid 24494: open "t.dat" flags 02101 = 3
	// line 3 pid 24495: close failed with EBADF (9)
	// lines 2-4 pid 24494: write(3, "hello\n", truncated=false) = 6
}
