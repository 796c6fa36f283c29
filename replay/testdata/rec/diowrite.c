// O_DIRECT writes from a misaligned buffer, whose address strace does not
// show (it shows the bytes): write and pwrite fail with EINVAL, an AIO
// write and a vectored AIO write complete with res=-EINVAL; aligned ones
// succeed.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static long io_setup(unsigned n, aio_context_t *c) { return syscall(SYS_io_setup, n, c); }
static long io_submit(aio_context_t c, long n, struct iocb **cbs) { return syscall(SYS_io_submit, c, n, cbs); }
static long io_getevents(aio_context_t c, long mn, long n, struct io_event *ev, void *t) { return syscall(SYS_io_getevents, c, mn, n, ev, t); }
static long io_destroy(aio_context_t c) { return syscall(SYS_io_destroy, c); }

int main(void) {
	int d = open("direct.dat", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	char *p;
	posix_memalign((void **)&p, 4096, 4 * 4096);
	memset(p, 'a', 4 * 4096);
	write(d, p + 1, 4096);        // EINVAL
	pwrite(d, p + 1, 4096, 4096); // EINVAL
	write(d, p, 4096);            // 4096
	aio_context_t ctx = 0;
	io_setup(8, &ctx);
	struct iovec wv[2] = {{p + 1, 4096}, {p + 4096, 4096}};
	struct iocb cb[3];
	memset(cb, 0, sizeof cb);
	cb[0].aio_lio_opcode = IOCB_CMD_PWRITE; cb[0].aio_fildes = d; cb[0].aio_buf = (unsigned long)(p + 1); cb[0].aio_nbytes = 4096; cb[0].aio_offset = 4096; cb[0].aio_data = 1;
	cb[1].aio_lio_opcode = IOCB_CMD_PWRITEV; cb[1].aio_fildes = d; cb[1].aio_buf = (unsigned long)wv; cb[1].aio_nbytes = 2; cb[1].aio_offset = 8192; cb[1].aio_data = 2;
	cb[2].aio_lio_opcode = IOCB_CMD_PWRITE; cb[2].aio_fildes = d; cb[2].aio_buf = (unsigned long)p; cb[2].aio_nbytes = 4096; cb[2].aio_offset = 4096; cb[2].aio_data = 3;
	struct iocb *cbs[3] = {&cb[0], &cb[1], &cb[2]};
	io_submit(ctx, 3, cbs);
	struct io_event ev[3];
	int got = 0;
	while (got < 3) {
		long n = io_getevents(ctx, 1, 3 - got, ev, NULL);
		if (n <= 0) break;
		got += n;
	}
	io_destroy(ctx);
	close(d);
	return 0;
}
