/* cutvec DIR: every shape of write, each longer than strace's default -s 32,
   then reads of bytes that only a longer -s shows. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static char a[100], b[50], c[40], d[60], e[70], f[64], one[40];

int main(int argc, char **argv) {
	char path[4096], got[64];
	if (argc != 2)
		return 2;
	memset(a, 'A', sizeof a), memset(b, 'B', sizeof b), memset(c, 'C', sizeof c);
	memset(d, 'D', sizeof d), memset(e, 'E', sizeof e), memset(f, 'F', sizeof f);
	for (int i = 0; i < 40; i++)
		one[i] = 'a' + i % 26;
	snprintf(path, sizeof path, "%s/f", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	struct iovec v1[] = {{a, sizeof a}, {b, sizeof b}};
	if (writev(fd, v1, 2) != 150) /* [0,150) */
		return 1;
	struct iovec v2[40];
	for (int i = 0; i < 40; i++)
		v2[i] = (struct iovec){one + i, 1};
	if (writev(fd, v2, 40) != 40) /* [150,190): strace cuts the array after -s elements */
		return 1;
	struct iovec v3[] = {{c, sizeof c}, {d, sizeof d}};
	if (pwritev(fd, v3, 2, 200) != 100) /* [200,300) */
		return 1;
	struct iovec v4[] = {{e, sizeof e}};
	if (pwritev2(fd, v4, 1, 300, RWF_DSYNC) != 70) /* [300,370) */
		return 1;
	aio_context_t ctx = 0;
	if (syscall(SYS_io_setup, 1, &ctx) != 0)
		return 1;
	struct iocb cb = {.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = fd, .aio_buf = (uintptr_t)f, .aio_nbytes = sizeof f, .aio_offset = 400};
	struct iocb *cbs[] = {&cb};
	struct io_event ev;
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1 || syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) /* [400,464) */
		return 1;
	struct iovec r1[] = {{got, 40}};
	if (preadv(fd, r1, 1, 40) != 40) /* A's that writev wrote past -s */
		return 1;
	if (pread(fd, got, 20, 120) != 20) /* B's */
		return 1;
	if (pread(fd, got, 42, 170) != 42) /* the end of the cut array, a hole, C's */
		return 1;
	struct iovec r2[] = {{got, 20}, {got + 20, 20}};
	if (preadv(fd, r2, 2, 240) != 40) /* D's */
		return 1;
	if (pread(fd, got, 20, 340) != 20 || pread(fd, got, 40, 420) != 40) /* E's, F's */
		return 1;
	if (fsync(fd) != 0 || close(fd) != 0)
		return 1;
	return 0;
}
