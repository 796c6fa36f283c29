package sim

import (
	"strconv"
	"sync"
)

// Sysno is a Linux x86-64 system call number (arch/x86/entry/syscalls/syscall_64.tbl).
// The constants SYS_READ ... are generated in zsysno_amd64.go from golang.org/x/sys/unix;
// every name strace prints for an x86-64 process has one.
type Sysno uint32

// String returns the name strace prints ("pread64", "newfstatat"), or "syscall_NNN"
// for a number Linux x86-64 does not define.
func (s Sysno) String() string {
	if int(s) < len(sysnoNames) && sysnoNames[s] != "" {
		return sysnoNames[s]
	}
	return "syscall_" + strconv.Itoa(int(s))
}

var (
	byNameOnce sync.Once
	byName     map[string]Sysno
)

// SysnoByName maps a name as strace prints it ("openat", "pread64", "_llseek" is not
// x86-64 and is not found) to its number.
func SysnoByName(name string) (Sysno, bool) {
	byNameOnce.Do(func() {
		byName = make(map[string]Sysno, len(sysnoNames))
		for i, n := range sysnoNames {
			if n != "" {
				byName[n] = Sysno(i)
			}
		}
	})
	s, ok := byName[name]
	return s, ok
}

// Support says how much of a syscall the model implements.
type Support uint8

const (
	// NotModelled: the call is accepted and returns 0 with no effect (brk, futex,
	// sockets, signals...). Callers count these and report them by name.
	NotModelled Support = iota
	// Partial: the call is modelled but some of its behaviour is not (see the note).
	Partial
	// Supported: the call is modelled with Linux's return values and errnos on every
	// path the model can reach.
	Supported
)

func (s Support) String() string {
	switch s {
	case Supported:
		return "supported"
	case Partial:
		return "partial"
	}
	return "not modelled"
}

// SupportOf returns how much of the syscall the model implements, with a note.
func SupportOf(nr Sysno) (Support, string) {
	in := Info(nr)
	return in.Support, in.Note
}

// Syscalls returns the support table for every x86-64 syscall, in number order.
func Syscalls() []SyscallInfo {
	out := make([]SyscallInfo, 0, len(sysnoNames))
	for i, n := range sysnoNames {
		if n == "" {
			continue
		}
		out = append(out, infos[i])
	}
	return out
}
