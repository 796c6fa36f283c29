#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
int main(){
  int p[2], s[2];
  pipe2(p, O_CLOEXEC);          /* 3 and 5: 4 is inherited */
  socketpair(AF_UNIX, SOCK_STREAM, 0, s);
  write(p[1], "x", 1); close(p[0]); close(p[1]); close(s[0]); close(s[1]);
  return 0;
}
