#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <string.h>
#include <stdlib.h>
#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <stdio.h>
int main(void){
  aio_context_t ctx = 0;
  syscall(SYS_io_setup, 8, &ctx);
  int fd = open("pre", O_RDWR|O_CREAT|O_TRUNC, 0644);
  char blk[4096];
  for (int i = 0; i < 3; i++) { memset(blk, 'a' + i, sizeof blk); write(fd, blk, sizeof blk); }
  int fd2 = open("wr", O_RDWR|O_CREAT|O_TRUNC, 0644);
  char *b1 = aligned_alloc(4096, 8192), *b2 = aligned_alloc(4096, 8192);
  struct iocb cb[4]; struct iocb *cbs[4];
  memset(cb, 0, sizeof cb);
  struct iovec iov[2] = {{b1, 4096}, {b2, 4096}};
  cb[0].aio_fildes = fd; cb[0].aio_lio_opcode = IOCB_CMD_PREAD; cb[0].aio_buf = (long)b1; cb[0].aio_nbytes = 4096; cb[0].aio_offset = 0; cb[0].aio_data = 1;
  cb[1].aio_fildes = fd; cb[1].aio_lio_opcode = IOCB_CMD_PREADV; cb[1].aio_buf = (long)iov; cb[1].aio_nbytes = 2; cb[1].aio_offset = 4096; cb[1].aio_data = 2;
  cb[2].aio_fildes = fd2; cb[2].aio_lio_opcode = IOCB_CMD_PWRITE; cb[2].aio_buf = (long)b1; cb[2].aio_nbytes = 100; cb[2].aio_offset = 0; cb[2].aio_data = 3;
  cb[3].aio_fildes = fd2; cb[3].aio_lio_opcode = IOCB_CMD_FDSYNC; cb[3].aio_data = 4;
  for (int i=0;i<4;i++) cbs[i]=&cb[i];
  syscall(SYS_io_submit, ctx, 4, cbs);
  struct io_event ev[8]; struct timespec ts = {0, 1000000};
  syscall(SYS_io_getevents, ctx, 4, 8, ev, &ts);
  syscall(SYS_io_destroy, ctx);
  return 0;
}
