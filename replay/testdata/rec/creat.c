// O_CREAT of files that existed before the trace, with neither O_EXCL nor
// O_TRUNC: a log reopened for appending (fstat, then lseek to its end), a
// file read after an O_CREAT open, and one whose size only a write at its
// end shows. Run in a directory holding log (100 bytes), data ("existing
// data\n") and big (4096 bytes).
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	struct stat st;
	int fd = open("log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	fstat(fd, &st);
	lseek(fd, 0, SEEK_END);
	write(fd, "line\n", 5);
	fstat(fd, &st);
	close(fd);
	char buf[64];
	fd = open("data", O_RDWR | O_CREAT, 0600);
	read(fd, buf, sizeof buf);
	pwrite(fd, "more\n", 5, 14);
	fstat(fd, &st);
	close(fd);
	fd = open("big", O_RDWR | O_CREAT, 0644);
	off_t end = lseek(fd, 0, SEEK_END);
	pwrite(fd, "tail", 4, end);
	fstat(fd, &st);
	close(fd);
	fd = open("new", O_WRONLY | O_CREAT, 0644);
	write(fd, "fresh\n", 6);
	fstat(fd, &st);
	close(fd);
	return 0;
}
