/* update8k DIR: replace DIR/data with 8 KiB of new content, the safe way:
   write a temp file, fsync it, rename it over data, fsync the directory. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	char buf[8192], tmp[4096], dst[4096];
	if (argc != 2)
		return 2;
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = 'a' + i % 26;
	snprintf(tmp, sizeof tmp, "%s/data.tmp", argv[1]);
	snprintf(dst, sizeof dst, "%s/data", argv[1]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf || fsync(fd) != 0 || close(fd) != 0)
		return 1;
	if (rename(tmp, dst) != 0)
		return 1;
	int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dir < 0 || fsync(dir) != 0 || close(dir) != 0)
		return 1;
	return 0;
}
