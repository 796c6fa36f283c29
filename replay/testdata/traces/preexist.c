/* Looks at a tree from before the trace: symlinks with lstat and readlink, and a
   directory opened without O_DIRECTORY (e, whose first sight is the open), then used as one. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
	struct stat st;
	char buf[4096];
	lstat("d/link", &st);
	readlink("d/link", buf, sizeof buf);
	lstat("d/dangling", &st);
	int fd = open("e", O_RDONLY);
	fstatat(fd, "g", &st, 0);
	syscall(SYS_getdents64, fd, buf, sizeof buf);
	close(fd);
	fd = open("d", O_RDONLY);
	fstatat(fd, "f", &st, 0);
	readlinkat(fd, "dangling", buf, sizeof buf);
	syscall(SYS_getdents64, fd, buf, sizeof buf);
	close(fd);
	return 0;
}
