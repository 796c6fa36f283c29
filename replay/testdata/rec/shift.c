// fallocate(2) FALLOC_FL_COLLAPSE_RANGE and FALLOC_FL_INSERT_RANGE on a file
// of written blocks and holes, with SEEK_DATA/SEEK_HOLE and reads after.
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	char b[4096];
	int fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 8; i += 2) {
		memset(b, 'a' + i, sizeof b);
		pwrite(fd, b, sizeof b, (off_t)i * 4096);
	}
	fsync(fd);
	fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 4096, 8192);
	fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 100, 4096);  /* EINVAL */
	fallocate(fd, FALLOC_FL_INSERT_RANGE, 0, 4096);
	fallocate(fd, FALLOC_FL_INSERT_RANGE, 1 << 20, 4096); /* EINVAL: past EOF */
	struct stat st;
	fstat(fd, &st);
	lseek(fd, 0, SEEK_DATA);
	lseek(fd, 4096, SEEK_HOLE);
	pread(fd, b, sizeof b, 4096);
	pread(fd, b, sizeof b, 8192);
	close(fd);
	return 0;
}
