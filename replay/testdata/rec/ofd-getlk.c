#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
int main(){
  int a = open("ofd.f", O_CREAT|O_RDWR, 0644);
  int b = open("ofd.f", O_RDWR);
  struct flock l; memset(&l, 0, sizeof l);
  l.l_type = F_WRLCK; l.l_whence = SEEK_SET; l.l_start = 0; l.l_len = 10;
  fcntl(a, F_OFD_SETLK, &l);
  memset(&l, 0, sizeof l); l.l_type = F_RDLCK; l.l_len = 5;
  fcntl(b, F_OFD_GETLK, &l);
  memset(&l, 0, sizeof l); l.l_type = F_WRLCK; l.l_start = 20; l.l_len = 5;
  fcntl(b, F_OFD_GETLK, &l);
  fcntl(b, F_OFD_SETLK, &l);
  memset(&l, 0, sizeof l); l.l_type = F_RDLCK; l.l_len = 0;
  fcntl(a, F_OFD_GETLK, &l);
  close(a); close(b); unlink("ofd.f");
  return 0;
}
