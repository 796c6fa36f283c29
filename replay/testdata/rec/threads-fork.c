#include <pthread.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/wait.h>
static void *w(void *a) { char n[16]; snprintf(n, sizeof n, "t%ld", (long)a); int fd = open(n, O_CREAT|O_WRONLY|O_TRUNC, 0644); write(fd, n, 2); close(fd); return 0; }
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, w, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  pid_t c = fork();
  if (c == 0) { int fd = open("child", O_CREAT|O_WRONLY, 0644); write(fd, "c", 1); close(fd); _exit(0); }
  waitpid(c, 0, 0);
  int fd = open("t0", O_RDONLY); char b[4]; read(fd, b, 4); close(fd);
  unlink("t1");
  return 0;
}
