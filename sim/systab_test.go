package sim

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// TestSyscallTableConsistent checks the rows of the syscall table: a handler goes
// with a support level, the listing is the table, the note names the file that
// implements the call, and each layout is one the readers of the table can follow.
func TestSyscallTableConsistent(t *testing.T) {
	all := Syscalls()
	require.Len(t, all, countNames())
	modelled := 0
	for _, in := range all {
		s, note := SupportOf(in.Nr)
		require.Equal(t, in.Support, s, in.Name)
		require.Equal(t, in.Note, note, in.Name)
		require.Equal(t, in.Modelled, handlerOf(in.Nr) != nil, in.Name)
		require.Equal(t, in.Modelled, in.Support != NotModelled, in.Name)
		if !in.Modelled {
			continue
		}
		modelled++
		require.NotNil(t, in.Args, "%s: modelled without a layout", in.Name)
		file, _, _ := strings.Cut(strings.TrimRight(strings.Fields(in.Note)[0], ";:"), ";")
		_, err := os.Stat(file)
		require.NoError(t, err, "%s: the note must start with the file that implements it", in.Name)
	}
	require.Greater(t, modelled, 90)
	for _, in := range all {
		require.LessOrEqual(t, len(in.Args), 6, in.Name)
		count := in.Slot(ArgCount, 0) >= 0
		for i, a := range in.Args {
			switch a.Kind {
			case ArgInBuf, ArgOutBuf, ArgInIov, ArgOutIov:
				require.True(t, count, "%s: a buffer without its count", in.Name)
			case ArgDirfd:
				require.Less(t, i+1, len(in.Args), in.Name)
				next := in.Args[i+1].Kind
				require.True(t, next == ArgPath || next == ArgPath2, "%s: a dirfd not followed by its path", in.Name)
			case ArgFlags:
				require.NotNil(t, a.Flags, "%s: a flag slot without names", in.Name)
				require.NotEmpty(t, a.Flags.Names, in.Name)
			case ArgNone:
				t.Fatalf("%s: slot %d has no kind", in.Name, i)
			}
			if a.Optional {
				require.Equal(t, len(in.Args)-1, i, "%s: only the last argument can be left out", in.Name)
			}
		}
		require.LessOrEqual(t, in.Slot(ArgPath, 1), -1, "%s: two first paths", in.Name)
		require.LessOrEqual(t, in.Slot(ArgPath2, 1), -1, "%s: two second paths", in.Name)
		if in.Ret == RetNewFd {
			require.GreaterOrEqual(t, in.Slot(ArgNewFd, 0), 0, in.Name)
		}
		if task := in.Props & (Forks | Execs | EndsGroup); task != 0 {
			require.NotZero(t, in.Props&Lifecycle, "%s: a task change without Lifecycle", in.Name)
			require.Zero(t, task&(task-1), "%s: more than one of Forks, Execs, EndsGroup", in.Name)
		}
		for _, a := range in.Args {
			require.False(t, a.Hex && a.Kind != ArgInt && a.Kind != ArgOffset, "%s: Hex on a slot that is not an integer", in.Name)
		}
	}
}

// TestDispatchFollowsTable checks that a call the table does not model is accepted
// with no effect, and that one it models reaches its handler (close of a bad fd
// fails with EBADF instead of returning 0).
func TestDispatchFollowsTable(t *testing.T) {
	k := New(vfs.New())
	p := k.Spawn()
	for _, in := range Syscalls() {
		if in.Modelled {
			continue
		}
		require.Equal(t, Result{}, k.Syscall(&Call{Nr: in.Nr, Task: p.Task(), Args: [6]int64{99}}), in.Name)
	}
	require.Equal(t, Fail(syscall.EBADF), k.Syscall(&Call{Nr: SYS_CLOSE, Task: p.Task(), Args: [6]int64{99}}))
	require.Equal(t, Result{}, k.Syscall(&Call{Nr: Sysno(9999), Task: p.Task()}))
}

func countNames() int {
	n := 0
	for _, s := range sysnoNames {
		if s != "" {
			n++
		}
	}
	return n
}

// TestDispatchAllocatesNothing: a call that goes through the syscall table's
// dispatch keeps its Call on the caller's stack.
func TestDispatchAllocatesNothing(t *testing.T) {
	p := New(vfs.New()).Spawn()
	var st unix.Stat_t
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(100, func() {
		p.Getpid()
		_ = p.Fstat(fd, &st)
		_ = p.Fsync(fd)
	}))

	// The calls that look their fds up through Task.withFile (and withVecFile).
	_, err = p.Pwrite(fd, make([]byte, 8192), 0)
	require.NoError(t, err)
	iov := [][]byte{make([]byte, 512), make([]byte, 512)}
	ts := []unix.Timespec{{Sec: 5}, {Nsec: unix.UTIME_OMIT}}
	ctx, err := p.IoSetup(8)
	require.NoError(t, err)
	k := p.Task().Kernel()
	submit := Call{Nr: SYS_IO_SUBMIT, Task: p.Task(), Args: [6]int64{int64(ctx), 1},
		Obj: []*Iocb{{Opcode: IOCB_CMD_FDSYNC, Fd: uint32(fd)}}}
	reap := Call{Nr: SYS_IO_GETEVENTS, Task: p.Task(), Args: [6]int64{int64(ctx), 1, 1, 0, AioWaitForever},
		Obj: make([]IoEvent, 1)}
	calls := []struct {
		name string
		fn   func() error
	}{
		{"fallocate", func() error { return p.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, 4096) }},
		{"preadv", func() error { _, err := p.Preadv(fd, iov, 0); return err }},
		{"pwritev", func() error { _, err := p.Pwritev(fd, iov, 0); return err }},
		{"readv", func() error { _, err := p.Readv(fd, iov); return err }},
		{"futimens", func() error { return p.Futimens(fd, ts) }},
		{"utimensat", func() error { return p.UtimesNanoAt(unix.AT_FDCWD, "/f", ts, 0) }},
		{"fremovexattr", func() error {
			if err := p.Fremovexattr(fd, "system.posix_acl_default"); err != unix.ENODATA {
				return err
			}
			return nil
		}},
		{"io_submit", func() error {
			// Calls built once: the facade's boxing of a slice in Obj allocates.
			if r := k.Syscall(&submit); r.Errno != 0 {
				return r.Errno
			}
			return errOf(k.Syscall(&reap))
		}},
		{"copy_file_range", func() error { // 0 bytes: no copy buffer
			return errOf(k.Syscall(&Call{Nr: SYS_COPY_FILE_RANGE, Task: p.Task(), Args: [6]int64{int64(fd), 0, int64(fd), 4096, 0, 0}}))
		}},
		{"sendfile", func() error {
			return errOf(k.Syscall(&Call{Nr: SYS_SENDFILE, Task: p.Task(), Args: [6]int64{int64(fd), int64(fd), 0, 0}}))
		}},
		{"mmap EBADF", func() error {
			// A mapping is memory of its own: only the look-up is measured.
			c := Call{Nr: SYS_MMAP, Task: p.Task(), Args: [6]int64{0, 4096, unix.PROT_READ, unix.MAP_SHARED, 99, 0}}
			if r := k.Syscall(&c); r.Errno != unix.EBADF {
				return fmt.Errorf("mmap of a closed fd: %v", r)
			}
			return nil
		}},
	}
	for _, c := range calls {
		require.NoError(t, c.fn(), c.name)
		require.Zero(t, testing.AllocsPerRun(100, func() { _ = c.fn() }), c.name)
	}
}

// TestFastPathRows: the rows marked FastPath (read, write, pread64, lseek)
// reach their handlers through dispatch, as every row does, and through
// Kernel.Syscall.
func TestFastPathRows(t *testing.T) {
	k := New(vfs.New())
	p := k.Spawn()
	var fast []string
	for _, in := range Syscalls() {
		if in.Props&FastPath == 0 {
			continue
		}
		fast = append(fast, in.Name)
		c := Call{Nr: in.Nr, Task: p.Task(), Args: [6]int64{99}}
		require.Equal(t, Fail(syscall.EBADF), k.dispatch(&c), "%s: dispatch has no case for it", in.Name)
		require.Equal(t, Fail(syscall.EBADF), k.Syscall(&c), "%s: Kernel.Syscall does not reach it", in.Name)
	}
	require.ElementsMatch(t, []string{"read", "write", "pread64", "lseek"}, fast)
}

// handlerOf returns the handler of nr's row, or nil.
func handlerOf(nr Sysno) func(k *Kernel, c *Call) Result {
	for _, r := range rows {
		if r.nr == nr {
			return r.handler
		}
	}
	return nil
}

// TestSyscallFamilies: the family properties agree with the rows' layouts
// and notes, so a row that gains a family, or a new row of one, cannot
// be left out of the code that reads it: Reads and Writes are the calls
// sys_read_write.go implements that move data into or out of the
// caller's buffers, Positional those of them with an offset slot; the
// syncs, resizes and AIO waits are sys_sync.go's and sys_aio.go's.
func TestSyscallFamilies(t *testing.T) {
	has := func(in *SyscallInfo, kinds ...ArgKind) bool {
		for _, k := range kinds {
			if in.Slot(k, 0) >= 0 {
				return true
			}
		}
		return false
	}
	file := func(in *SyscallInfo) string {
		if in.Note == "" {
			return ""
		}
		f, _, _ := strings.Cut(strings.TrimRight(strings.Fields(in.Note)[0], ";:"), ";")
		return f
	}
	count := map[Prop]int{}
	for _, row := range Syscalls() {
		in := &row
		p := in.Props
		for _, f := range []Prop{Reads, Writes, Positional, SyncsFile, SyncsAll, Resizes, AIOWait} {
			if p&f != 0 {
				count[f]++
			}
		}
		rw := file(in) == "sys_read_write.go" && p&Data != 0 && in.Slot(ArgFd, 0) == 0
		require.Equal(t, rw && has(in, ArgOutBuf, ArgOutIov), p&Reads != 0, "%s: Reads", in.Name)
		require.Equal(t, rw && has(in, ArgInBuf, ArgInIov), p&Writes != 0, "%s: Writes", in.Name)
		require.Equal(t, p&(Reads|Writes) != 0 && has(in, ArgOffset), p&Positional != 0, "%s: Positional", in.Name)
		if p&Positional != 0 {
			require.Equal(t, PosSlot, in.Slot(ArgOffset, 0), in.Name)
		}
		if p&(SyncsFile|SyncsAll|Resizes) != 0 {
			require.Equal(t, "sys_sync.go", file(in), in.Name)
			require.Equal(t, RetZero, in.Ret, in.Name)
		}
		if p&SyncsFile != 0 {
			require.Equal(t, []Arg{aFd}, in.Args, "%s: a file sync takes the fd alone", in.Name)
			require.Zero(t, p&SyncsAll, in.Name)
		}
		if p&Resizes != 0 {
			require.True(t, has(in, ArgOffset), "%s: a size or range", in.Name)
		}
		if p&AIOWait != 0 {
			require.Equal(t, "sys_aio.go", file(in), in.Name)
			require.Equal(t, ArgAddr, in.Args[0].Kind, "%s: an AIO context", in.Name)
		}
	}
	require.Equal(t, map[Prop]int{Reads: 5, Writes: 5, Positional: 6, SyncsFile: 2, SyncsAll: 2, Resizes: 3, AIOWait: 3}, count)
}
