// O_TMPFILE as programs use it: write an unnamed file, then give it a name
// with linkat(fd, "", dirfd, name, AT_EMPTY_PATH) or through
// /proc/self/fd/N with AT_SYMLINK_FOLLOW; an O_EXCL one cannot be named.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	mkdir("d", 0755);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	int a = open("d", O_TMPFILE | O_RDWR, 0600);
	write(a, "first", 5);
	fsync(a);
	linkat(a, "", dfd, "a", AT_EMPTY_PATH);
	fsync(dfd);
	int b = openat(dfd, ".", O_TMPFILE | O_WRONLY, 0644);
	write(b, "second", 6);
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", b);
	linkat(AT_FDCWD, p, dfd, "b", AT_SYMLINK_FOLLOW);
	int c = open("d", O_TMPFILE | O_RDWR | O_EXCL, 0600);
	write(c, "third", 5);
	linkat(c, "", dfd, "c", AT_EMPTY_PATH); // ENOENT
	struct stat st;
	fstat(c, &st);
	pread(a, p, 5, 0);
	close(a); close(b); close(c);
	linkat(AT_FDCWD, "d/a", AT_FDCWD, "d/a2", 0);
	unlink("d/a");
	return 0;
}
