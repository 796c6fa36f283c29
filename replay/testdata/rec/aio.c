// Linux AIO through raw syscalls: vectored iocbs, O_DIRECT misalignment
// (an event with res=-EINVAL), more iocbs than io_setup's nr_events, and
// io_getevents with min_nr < nr and a timeout.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long io_setup(unsigned n, aio_context_t *c) { return syscall(SYS_io_setup, n, c); }
static long io_submit(aio_context_t c, long n, struct iocb **cbs) { return syscall(SYS_io_submit, c, n, cbs); }
static long io_getevents(aio_context_t c, long mn, long n, struct io_event *ev, struct timespec *t) { return syscall(SYS_io_getevents, c, mn, n, ev, t); }

int main(void) {
	int d = open("direct.dat", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	int b = open("buffered.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *p;
	posix_memalign((void **)&p, 4096, 4 * 4096);
	memset(p, 'a', 4 * 4096);
	write(b, p, 5000);
	aio_context_t ctx = 0;
	io_setup(4, &ctx);
	struct iovec wv[2] = {{p, 4096}, {p + 4096, 4096}};
	struct iovec rv[2] = {{p + 2 * 4096, 4096}, {p + 3 * 4096, 4096}};
	struct iocb cb[6];
	memset(cb, 0, sizeof cb);
	// 0: a vectored direct write of 8192 bytes
	cb[0].aio_lio_opcode = IOCB_CMD_PWRITEV; cb[0].aio_fildes = d; cb[0].aio_buf = (unsigned long)wv; cb[0].aio_nbytes = 2; cb[0].aio_data = 0x64;
	// 1: a direct read at a misaligned buffer: accepted, completes with -EINVAL
	cb[1].aio_lio_opcode = IOCB_CMD_PREAD; cb[1].aio_fildes = d; cb[1].aio_buf = (unsigned long)(p + 1); cb[1].aio_nbytes = 4096; cb[1].aio_data = 0x65;
	// 2: a direct read at a misaligned offset
	cb[2].aio_lio_opcode = IOCB_CMD_PREAD; cb[2].aio_fildes = d; cb[2].aio_buf = (unsigned long)(p + 8192); cb[2].aio_nbytes = 4096; cb[2].aio_offset = 100; cb[2].aio_data = 0x66;
	// 3: a buffered vectored read
	cb[3].aio_lio_opcode = IOCB_CMD_PREADV; cb[3].aio_fildes = b; cb[3].aio_buf = (unsigned long)rv; cb[3].aio_nbytes = 2; cb[3].aio_data = 0x67;
	// 4: a buffered read past EOF
	cb[4].aio_lio_opcode = IOCB_CMD_PREAD; cb[4].aio_fildes = b; cb[4].aio_buf = (unsigned long)(p + 12288); cb[4].aio_nbytes = 100; cb[4].aio_offset = 1 << 20; cb[4].aio_data = 0x68;
	// 5: a buffered write
	cb[5].aio_lio_opcode = IOCB_CMD_PWRITE; cb[5].aio_fildes = b; cb[5].aio_buf = (unsigned long)p; cb[5].aio_nbytes = 10; cb[5].aio_offset = 6000; cb[5].aio_data = 0x69;
	struct iocb *cbs[6] = {&cb[0], &cb[1], &cb[2], &cb[3], &cb[4], &cb[5]};
	io_submit(ctx, 6, cbs);
	struct io_event ev[8];
	struct timespec ts = {1, 0};
	int got = 0;
	while (got < 6) {
		long n = io_getevents(ctx, 1, 8, ev, &ts);
		if (n <= 0) break;
		got += n;
	}
	// direct reads go to the device, buffered ones complete at once:
	// the events come back in another order than the iocbs
	struct iocb cb2[4];
	memset(cb2, 0, sizeof cb2);
	for (int i = 0; i < 2; i++) {
		cb2[i].aio_lio_opcode = IOCB_CMD_PREAD; cb2[i].aio_fildes = d; cb2[i].aio_buf = (unsigned long)(p + 4096 * (2 + i)); cb2[i].aio_nbytes = 4096; cb2[i].aio_offset = 4096 * i; cb2[i].aio_data = 0x70 + i;
	}
	cb2[2].aio_lio_opcode = IOCB_CMD_PREAD; cb2[2].aio_fildes = b; cb2[2].aio_buf = (unsigned long)p; cb2[2].aio_nbytes = 100; cb2[2].aio_data = 0x72;
	cb2[3].aio_lio_opcode = IOCB_CMD_PREAD; cb2[3].aio_fildes = b; cb2[3].aio_buf = (unsigned long)p; cb2[3].aio_nbytes = 100; cb2[3].aio_offset = 1 << 20; cb2[3].aio_data = 0x73;
	struct iocb *cbs2[4] = {&cb2[0], &cb2[1], &cb2[2], &cb2[3]};
	io_submit(ctx, 4, cbs2);
	got = 0;
	while (got < 4) {
		long n = io_getevents(ctx, 1, 8, ev, &ts);
		if (n <= 0) break;
		got += n;
	}
	// nothing left: min_nr 0 returns at once, min_nr 1 waits for the timeout
	struct timespec shortt = {0, 1000000};
	io_getevents(ctx, 0, 8, ev, &shortt);
	io_getevents(ctx, 1, 8, ev, &shortt);
	syscall(SYS_io_destroy, ctx);
	close(d); close(b);
	return 0;
}
