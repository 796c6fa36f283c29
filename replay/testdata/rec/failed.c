// Failed calls whose errors show what existed before the trace: a
// RENAME_NOREPLACE that found its target, an O_DIRECTORY open of a file, a
// rename of a file to a name with a trailing slash, a link over an existing
// name, an O_NOFOLLOW open of a symlink, an ENOTDIR below a file, and a
// misaligned O_DIRECT read of a file with data. Run in a directory that
// holds a, b, f, g, h, l (a symlink), d/ and data (8192 bytes).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_NOREPLACE); // EEXIST
	open("f", O_RDONLY | O_DIRECTORY);                          // ENOTDIR
	rename("g", "d/");                                          // ENOTDIR
	link("h", "b");                                             // EEXIST
	open("l", O_RDONLY | O_NOFOLLOW);                           // ELOOP
	struct stat st;
	stat("f/x", &st);                                           // ENOTDIR
	int fd = open("data", O_RDONLY | O_DIRECT);
	char *buf = aligned_alloc(4096, 8192);
	read(fd, buf + 1, 4096);                                    // EINVAL
	pread(fd, buf + 1, 4096, 4096);                             // EINVAL
	close(fd);
	return 0;
}
