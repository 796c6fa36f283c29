#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
int main(){
  int p[2]; char b[64];
  pipe2(p, O_CLOEXEC);
  write(p[1], "hello", 5);
  read(p[0], b, 64);
  lseek(p[0], 0, SEEK_CUR);
  fcntl(p[0], F_GETPIPE_SZ);
  close(p[1]); read(p[0], b, 64); close(p[0]);
  int s[2]; socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0, s);
  fcntl(s[0], F_GETFL); write(s[0], "x", 1); read(s[1], b, 1); close(s[0]); close(s[1]);
  mkfifo("ff", 0644);
  struct stat st; stat("ff", &st);
  int r = open("ff", O_RDONLY|O_NONBLOCK);
  int w = open("ff", O_WRONLY);
  write(w, "data", 4);
  pread(r, b, 4, 0); lseek(r, 0, SEEK_SET); posix_fadvise(r, 0, 0, POSIX_FADV_DONTNEED);
  read(r, b, 64); fstat(r, &st); close(w); read(r, b, 64); close(r);
  mknod("nul", S_IFCHR|0666, makedev(1,3));
  int n = open("nul", O_RDWR); write(n, "zz", 2); close(n);
  unlink("ff"); unlink("nul");
  return 0;
}
