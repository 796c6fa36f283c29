#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <utime.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
int main(){
  char b[64];
  int fd = open("xf", O_CREAT|O_RDWR, 0644);
  getxattr("xf", "system.posix_acl_access", b, sizeof b);
  lgetxattr("xf", "system.posix_acl_default", b, sizeof b);
  fgetxattr(fd, "system.posix_acl_access", b, 0);
  getxattr("nonexistent", "system.posix_acl_access", b, sizeof b);
  struct utimbuf u = {1000, 2000}; syscall(SYS_utime, "xf", &u); syscall(SYS_utime, "xf", NULL);
  struct timeval tv[2] = {{3000, 5}, {4000, 999999}}; syscall(SYS_utimes, "xf", tv);
  struct timeval bad[2] = {{1, 1000000}, {0, 0}}; syscall(SYS_utimes, "xf", bad); listxattr("xf", b, sizeof b); flistxattr(fd, b, 0); llistxattr("nonexistent", b, 8);
  syscall(SYS_futimesat, AT_FDCWD, "xf", tv);
  close(fd); unlink("xf");
  return 0;
}
