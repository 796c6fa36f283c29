#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <string.h>
static int o2(int d, const char *p, unsigned long long fl, unsigned long long mode, unsigned long long res) {
  struct open_how h; memset(&h, 0, sizeof h); h.flags = fl; h.mode = mode; h.resolve = res;
  return syscall(SYS_openat2, d, p, &h, sizeof h);
}
int main(){
  mkdir("top", 0755); mkdir("top/sub", 0755);
  int f = open("top/sub/f", O_CREAT|O_WRONLY, 0644); write(f, "abc", 3); close(f);
  symlink("/etc", "top/abs"); symlink("sub/f", "top/rel");
  int d = open("top", O_PATH|O_DIRECTORY);
  int a = o2(d, "sub/f", O_RDONLY|O_CLOEXEC, 0, RESOLVE_BENEATH);
  fcntl(a, F_GETFL); close(a);
  o2(d, "../top/sub/f", O_RDONLY, 0, RESOLVE_BENEATH);
  o2(d, "abs", O_RDONLY, 0, RESOLVE_BENEATH);
  o2(d, "rel", O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
  a = o2(d, "/sub/f", O_RDONLY, 0, RESOLVE_IN_ROOT); close(a);
  a = o2(d, "new", O_RDWR|O_CREAT|O_EXCL, 0600, RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS); write(a, "x", 1); close(a);
  o2(d, "sub/f", O_RDWR|O_TRUNC, 0, RESOLVE_CACHED);
  o2(d, "sub/f", O_RDONLY, 0644, 0);
  o2(d, "sub/f", O_RDONLY, 0, RESOLVE_BENEATH|RESOLVE_IN_ROOT);
  a = o2(d, "sub/f", O_RDONLY, 0, RESOLVE_NO_XDEV); close(a);
  unlink("top/new"); unlink("top/rel"); unlink("top/abs"); unlink("top/sub/f"); rmdir("top/sub"); rmdir("top");
  return 0;
}
