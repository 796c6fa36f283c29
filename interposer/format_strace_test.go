package interposer

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// TestFormatAsStrace: the tracer's line of each call is the line strace 6.1
// printed for the same call on Linux 6.x x86-64 (a C program making it; the
// alignment spaces before " = " removed).
func TestFormatAsStrace(t *testing.T) {
	ctx := sim.AioContext(0x7f21b4620000)
	now := &[2]unix.Timespec{{Sec: 5}, {Nsec: unix.UTIME_NOW}}
	omit := &[2]unix.Timespec{{Sec: 5, Nsec: 7}, {Nsec: unix.UTIME_OMIT}}
	acl := []byte("\x02\x00\x00\x00\x01\x00\x06\x00\xff\xff\xff\xff\x04\x00\x04\x00\xff\xff\xff\xff\x20\x00\x04\x00\xff\xff\xff\xff")
	buf := make([]byte, 11)
	for _, tc := range []struct {
		c    sim.Call
		r    sim.Result
		want string
	}{
		{sim.Call{Nr: sim.SYS_UTIMENSAT, Args: [6]int64{unix.AT_FDCWD}, Path: "f", Obj: now}, sim.Result{},
			`utimensat(AT_FDCWD, "f", [{tv_sec=5, tv_nsec=0} /* 1970-01-01T00:00:05+0000 */, UTIME_NOW], 0) = 0`},
		{sim.Call{Nr: sim.SYS_UTIMENSAT, Args: [6]int64{unix.AT_FDCWD, 0, 0, unix.AT_SYMLINK_NOFOLLOW}, Path: "f", Obj: omit}, sim.Result{},
			`utimensat(AT_FDCWD, "f", [{tv_sec=5, tv_nsec=7} /* 1970-01-01T00:00:05.000000007+0000 */, UTIME_OMIT], AT_SYMLINK_NOFOLLOW) = 0`},
		{sim.Call{Nr: sim.SYS_UTIMENSAT, Args: [6]int64{3, sim.PathNull}, Obj: now}, sim.Result{},
			`utimensat(3, NULL, [{tv_sec=5, tv_nsec=0} /* 1970-01-01T00:00:05+0000 */, UTIME_NOW], 0) = 0`},
		{sim.Call{Nr: sim.SYS_SETXATTR, Args: [6]int64{0, 0, 0, 28}, Path: "f", Path2: "system.posix_acl_access", Buf: acl}, sim.Result{},
			`setxattr("f", "system.posix_acl_access", "\2\0\0\0\1\0\6\0\377\377\377\377\4\0\4\0\377\377\377\377 \0\4\0\377\377\377\377", 28, 0) = 0`},
		{sim.Call{Nr: sim.SYS_FSETXATTR, Args: [6]int64{3, 0, 0, 1, unix.XATTR_CREATE | unix.XATTR_REPLACE}, Path2: "user.x", Buf: []byte("v")}, sim.Fail(unix.ENODATA),
			`fsetxattr(3, "user.x", "v", 1, XATTR_CREATE|XATTR_REPLACE) = -1 ENODATA (No data available)`},
		{sim.Call{Nr: sim.SYS_LREMOVEXATTR, Path: "f", Path2: "user.x"}, sim.Fail(unix.ENODATA),
			`lremovexattr("f", "user.x") = -1 ENODATA (No data available)`},
		{sim.Call{Nr: sim.SYS_FREMOVEXATTR, Args: [6]int64{3}, Path2: "user.x"}, sim.Fail(unix.ENODATA),
			`fremovexattr(3, "user.x") = -1 ENODATA (No data available)`},
		{sim.Call{Nr: sim.SYS_MMAP, Args: [6]int64{0, 4096, unix.PROT_READ | unix.PROT_WRITE, unix.MAP_SHARED, 3, 0}}, sim.Result{Ret: 0x7f21b4624000},
			`mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, 3, 0) = 0x7f21b4624000`},
		{sim.Call{Nr: sim.SYS_MMAP, Args: [6]int64{0, 8192, unix.PROT_READ, unix.MAP_PRIVATE | unix.MAP_POPULATE, 3, 4096}}, sim.Result{Ret: 0x7f21b4623000},
			`mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_POPULATE, 3, 0x1000) = 0x7f21b4623000`},
		{sim.Call{Nr: sim.SYS_MMAP, Args: [6]int64{0, 8192, unix.PROT_NONE, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS, -1, 0}}, sim.Result{Ret: 0x7f21b4621000},
			`mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f21b4621000`},
		{sim.Call{Nr: sim.SYS_MMAP, Args: [6]int64{0x7f21b4460000, 1400832, unix.PROT_READ | unix.PROT_EXEC, unix.MAP_PRIVATE | unix.MAP_FIXED | unix.MAP_DENYWRITE, 3, 0x26000}}, sim.Result{Ret: 0x7f21b4460000},
			`mmap(0x7f21b4460000, 1400832, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000) = 0x7f21b4460000`},
		{sim.Call{Nr: sim.SYS_MSYNC, Args: [6]int64{0x7f21b4624000, 4096, unix.MS_SYNC}}, sim.Result{},
			`msync(0x7f21b4624000, 4096, MS_SYNC) = 0`},
		{sim.Call{Nr: sim.SYS_MSYNC, Args: [6]int64{0x7f21b4624000, 4096, unix.MS_ASYNC | unix.MS_INVALIDATE}}, sim.Result{},
			`msync(0x7f21b4624000, 4096, MS_ASYNC|MS_INVALIDATE) = 0`},
		{sim.Call{Nr: sim.SYS_MUNMAP, Args: [6]int64{0x7f21b4624000, 4096}}, sim.Result{},
			`munmap(0x7f21b4624000, 4096) = 0`},
		{sim.Call{Nr: sim.SYS_IO_SETUP, Args: [6]int64{4}, Obj: &ctx}, sim.Result{},
			`io_setup(4, [0x7f21b4620000]) = 0`},
		{sim.Call{Nr: sim.SYS_IO_SUBMIT, Args: [6]int64{int64(ctx), 4}, Obj: []*sim.Iocb{
			{Data: 7, Opcode: sim.IOCB_CMD_PREAD, Fd: 3, Buf: buf, Addr: 0x55b472fa2000},
			{Data: 8, Opcode: sim.IOCB_CMD_PWRITE, Fd: 3, Buf: buf, Offset: 100},
			{Data: 9, Opcode: sim.IOCB_CMD_FSYNC, Fd: 3, Buf: buf},
			{Data: 10, Opcode: sim.IOCB_CMD_FDSYNC, Fd: 3, Buf: buf}}}, sim.Result{Ret: 2},
			`io_submit(0x7f21b4620000, 4, [{aio_data=0x7, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=3, aio_buf=0x55b472fa2000, aio_nbytes=11, aio_offset=0}, {aio_data=0x8, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=3, aio_buf="\0\0\0\0\0\0\0\0\0\0\0", aio_nbytes=11, aio_offset=100}, {aio_data=0x9, aio_lio_opcode=IOCB_CMD_FSYNC, aio_fildes=3}, {aio_data=0xa, aio_lio_opcode=IOCB_CMD_FDSYNC, aio_fildes=3}]) = 2`},
		{sim.Call{Nr: sim.SYS_IO_SUBMIT, Args: [6]int64{int64(ctx), 1}, Obj: []*sim.Iocb{
			{Opcode: sim.IOCB_CMD_PWRITE, Fd: 3, Buf: []byte("abc\n")}}}, sim.Result{Ret: 1},
			`io_submit(0x7f21b4620000, 1, [{aio_data=0, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=3, aio_buf="abc\n", aio_nbytes=4, aio_offset=0}]) = 1`},
		{sim.Call{Nr: sim.SYS_IO_GETEVENTS, Args: [6]int64{int64(ctx), 1, 4, 0, 1e9 + 500}, Obj: []sim.IoEvent{
			{Data: 7, Obj: 0x7ffd55324f00, Res: 11}, {Data: 8, Obj: 0x7ffd55324ec0, Res: 11}, {}, {}}}, sim.Result{Ret: 2},
			`io_getevents(0x7f21b4620000, 1, 4, [{data=0x7, obj=0x7ffd55324f00, res=11, res2=0}, {data=0x8, obj=0x7ffd55324ec0, res=11, res2=0}], {tv_sec=1, tv_nsec=500}) = 2`},
		{sim.Call{Nr: sim.SYS_IO_GETEVENTS, Args: [6]int64{int64(ctx), 0, 4, 0, sim.AioWaitForever}, Obj: make([]sim.IoEvent, 4)}, sim.Result{},
			`io_getevents(0x7f21b4620000, 0, 4, [], NULL) = 0`},
		{sim.Call{Nr: sim.SYS_IO_DESTROY, Args: [6]int64{int64(ctx)}}, sim.Result{},
			`io_destroy(0x7f21b4620000) = 0`},
		{sim.Call{Nr: sim.SYS_IO_DESTROY}, sim.Fail(unix.EINVAL),
			`io_destroy(NULL) = -1 EINVAL (Invalid argument)`},
		{sim.Call{Nr: sim.SYS_PRLIMIT64, Args: [6]int64{0, unix.RLIMIT_FSIZE}, Obj: &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}}, sim.Result{},
			`prlimit64(0, RLIMIT_FSIZE, {rlim_cur=RLIM64_INFINITY, rlim_max=RLIM64_INFINITY}, NULL) = 0`},
		{sim.Call{Nr: sim.SYS_PRLIMIT64, Args: [6]int64{0, unix.RLIMIT_NOFILE}, Obj: &unix.Rlimit{Cur: 2048, Max: 1 << 20}}, sim.Fail(unix.EPERM),
			`prlimit64(0, RLIMIT_NOFILE, {rlim_cur=2*1024, rlim_max=1024*1024}, NULL) = -1 EPERM (Operation not permitted)`},
		{sim.Call{Nr: sim.SYS_PRLIMIT64, Args: [6]int64{0, unix.RLIMIT_NOFILE}, Obj: &unix.Rlimit{Max: 1025}}, sim.Result{},
			`prlimit64(0, RLIMIT_NOFILE, {rlim_cur=0, rlim_max=1025}, NULL) = 0`},
		{sim.Call{Nr: sim.SYS_COPY_FILE_RANGE, Args: [6]int64{3, 0, 4, 5, 5, 0}}, sim.Result{Ret: 5},
			`copy_file_range(3, [0], 4, [5], 5, 0) = 5`},
		{sim.Call{Nr: sim.SYS_COPY_FILE_RANGE, Args: [6]int64{3, sim.NullOffset, 4, sim.NullOffset, 5, 0}}, sim.Result{Ret: 5},
			`copy_file_range(3, NULL, 4, NULL, 5, 0) = 5`},
		{sim.Call{Nr: sim.SYS_SENDFILE, Args: [6]int64{4, 3, 2, 3}}, sim.Result{Ret: 3},
			`sendfile(4, 3, [2] => [5], 3) = 3`},
		{sim.Call{Nr: sim.SYS_SENDFILE, Args: [6]int64{4, 3, sim.NullOffset, 3}}, sim.Result{Ret: 3},
			`sendfile(4, 3, NULL, 3) = 3`},
		{sim.Call{Nr: sim.SYS_FALLOCATE, Args: [6]int64{3, unix.FALLOC_FL_KEEP_SIZE | unix.FALLOC_FL_PUNCH_HOLE, 0, 4096}}, sim.Result{},
			`fallocate(3, FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE, 0, 4096) = 0`},
		{sim.Call{Nr: sim.SYS_FALLOCATE, Args: [6]int64{3, unix.FALLOC_FL_ZERO_RANGE | unix.FALLOC_FL_KEEP_SIZE, 0, 4096}}, sim.Result{},
			`fallocate(3, FALLOC_FL_KEEP_SIZE|FALLOC_FL_ZERO_RANGE, 0, 4096) = 0`},
		{sim.Call{Nr: sim.SYS_FALLOCATE, Args: [6]int64{3, unix.FALLOC_FL_COLLAPSE_RANGE, 0, 4096}}, sim.Fail(unix.EINVAL),
			`fallocate(3, FALLOC_FL_COLLAPSE_RANGE, 0, 4096) = -1 EINVAL (Invalid argument)`},
		{sim.Call{Nr: sim.SYS_FALLOCATE, Args: [6]int64{3, unix.FALLOC_FL_NO_HIDE_STALE, 0, 4096}}, sim.Fail(unix.EOPNOTSUPP),
			`fallocate(3, FALLOC_FL_NO_HIDE_STALE, 0, 4096) = -1 EOPNOTSUPP (Operation not supported)`},
		{sim.Call{Nr: sim.SYS_FALLOCATE, Args: [6]int64{3, 0, 0, 4096}}, sim.Result{},
			`fallocate(3, 0, 0, 4096) = 0`},
		{sim.Call{Nr: sim.SYS_RENAMEAT2, Args: [6]int64{unix.AT_FDCWD, 0, unix.AT_FDCWD, 0, unix.RENAME_NOREPLACE}, Path: "g", Path2: "h"}, sim.Fail(unix.EEXIST),
			`renameat2(AT_FDCWD, "g", AT_FDCWD, "h", RENAME_NOREPLACE) = -1 EEXIST (File exists)`},
		{sim.Call{Nr: sim.SYS_RENAMEAT2, Args: [6]int64{unix.AT_FDCWD, 0, unix.AT_FDCWD, 0, unix.RENAME_NOREPLACE | unix.RENAME_WHITEOUT}, Path: "h", Path2: "f"}, sim.Fail(unix.EEXIST),
			`renameat2(AT_FDCWD, "h", AT_FDCWD, "f", RENAME_NOREPLACE|RENAME_WHITEOUT) = -1 EEXIST (File exists)`},
		{sim.Call{Nr: sim.SYS_RENAMEAT2, Args: [6]int64{unix.AT_FDCWD, 0, unix.AT_FDCWD, 0, unix.RENAME_EXCHANGE}, Path: "h", Path2: "f"}, sim.Result{},
			`renameat2(AT_FDCWD, "h", AT_FDCWD, "f", RENAME_EXCHANGE) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_SETLK}, Obj: &unix.Flock_t{Type: unix.F_WRLCK}}, sim.Result{},
			`fcntl(3, F_SETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=0}) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_SETLKW}, Obj: &unix.Flock_t{Type: unix.F_RDLCK, Whence: unix.SEEK_CUR, Start: 10, Len: -5}}, sim.Result{},
			`fcntl(3, F_SETLKW, {l_type=F_RDLCK, l_whence=SEEK_CUR, l_start=10, l_len=-5}) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_GETLK}, Obj: &unix.Flock_t{Type: unix.F_UNLCK, Len: 100}}, sim.Result{},
			`fcntl(3, F_GETLK, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=0, l_len=100, l_pid=0}) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_OFD_SETLK}, Obj: &unix.Flock_t{Type: unix.F_UNLCK, Whence: unix.SEEK_END}}, sim.Result{},
			`fcntl(3, F_OFD_SETLK, {l_type=F_UNLCK, l_whence=SEEK_END, l_start=0, l_len=0}) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_OFD_GETLK}, Obj: &unix.Flock_t{Type: unix.F_WRLCK, Len: 5, Pid: 22015}}, sim.Result{},
			`fcntl(3, F_OFD_GETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=5, l_pid=22015}) = 0`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{4, unix.F_SETLK}, Obj: &unix.Flock_t{Type: unix.F_WRLCK, Len: 5}}, sim.Fail(unix.EAGAIN),
			`fcntl(4, F_SETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=5}) = -1 EAGAIN (Resource temporarily unavailable)`},
		{sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{3, unix.F_SETLK}}, sim.Fail(unix.EFAULT),
			`fcntl(3, F_SETLK, NULL) = -1 EFAULT (Bad address)`},
	} {
		require.Equal(t, tc.want, FormatCall(tc.c, tc.r))
	}
}
