// fds open before the trace: F_DUPFD finds fd 10 taken (the shell opened it),
// fstat shows stdout a pipe and stdin a character device, and dup2 and
// close of fd 10 succeed. Run as `./fds 10</dev/null | cat`.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	struct stat st;
	int fd = fcntl(0, F_DUPFD, 10);
	fstat(1, &st);
	write(1, "hello\n", 6);
	fstat(0, &st);
	int g = dup(2);
	close(fd);
	close(g);
	lseek(1, 0, SEEK_CUR);
	close(10);
	return 0;
}
