#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
	int fd = open("bad.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, "hello world", 11);
	aio_context_t ctx = 0;
	syscall(SYS_io_setup, 8, &ctx);
	unsigned long addrs[] = {0x1000, 0xffff800000000000UL, 0};
	for (int op = 0; op < 2; op++)
	for (int i = 0; i < 3; i++) {
		struct iocb cb; memset(&cb, 0, sizeof cb);
		cb.aio_lio_opcode = op ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD; cb.aio_fildes = fd; cb.aio_buf = addrs[i]; cb.aio_nbytes = 5;
		struct iocb *cbs[1] = {&cb};
		long r = syscall(SYS_io_submit, ctx, 1, cbs);
		int e = errno;
		struct io_event ev; long n = 0;
		if (r == 1) n = syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL);
		printf("op %d addr %#lx: submit %ld %s, events %ld res %lld\n", op, addrs[i], r, r < 0 ? strerror(e) : "", n, n == 1 ? (long long)ev.res : 0LL);
	}
	// bad iocb pointer itself
	struct iocb *cbs[1] = {(struct iocb *)0x1000};
	long r = syscall(SYS_io_submit, ctx, 1, cbs);
	printf("bad iocb pointer: %ld %s\n", r, strerror(errno));
	r = syscall(SYS_io_submit, ctx, 1, (struct iocb **)0x1000);
	printf("bad iocb array: %ld %s\n", r, strerror(errno));
	return 0;
}
