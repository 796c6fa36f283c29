/* synctool: small device-bound workloads for recording with strace -T.
 *   synctool fsync N FILE        N x (append 4 KiB, fsync)
 *   synctool fdatasync N FILE    N x (append 4 KiB, fdatasync)
 *   synctool overwrite N FILE    N x (overwrite 4 KiB in a preallocated file, fdatasync)
 *   synctool directread N FILE   write 16 MiB, fsync, then N x O_DIRECT pread 4 KiB at
 *                                pseudo-random aligned offsets (fixed LCG, same each run)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what) { perror(what); exit(1); }

int main(int argc, char **argv) {
	if (argc != 4) { fprintf(stderr, "usage: synctool MODE N FILE\n"); return 2; }
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	const char *path = argv[3];
	static char buf[1 << 20] __attribute__((aligned(4096)));
	memset(buf, 'x', sizeof buf);
	if (!strcmp(mode, "fsync") || !strcmp(mode, "fdatasync")) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		if (fd < 0) die("open");
		for (int i = 0; i < n; i++) {
			if (write(fd, buf, 4096) != 4096) die("write");
			if ((mode[1] == 's' ? fsync(fd) : fdatasync(fd)) != 0) die("sync");
		}
		return close(fd);
	}
	if (!strcmp(mode, "overwrite")) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) die("open");
		if (write(fd, buf, sizeof buf) != sizeof buf) die("write");
		if (fsync(fd) != 0) die("fsync");
		for (int i = 0; i < n; i++) {
			if (pwrite(fd, buf, 4096, (off_t)(i % 256) * 4096) != 4096) die("pwrite");
			if (fdatasync(fd) != 0) die("fdatasync");
		}
		return close(fd);
	}
	if (!strcmp(mode, "directread")) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) die("open");
		for (int i = 0; i < 16; i++)
			if (write(fd, buf, sizeof buf) != sizeof buf) die("write");
		if (fsync(fd) != 0) die("fsync");
		close(fd);
		fd = open(path, O_RDONLY | O_DIRECT);
		if (fd < 0) die("open O_DIRECT");
		unsigned x = 12345;
		for (int i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			off_t off = (off_t)((x >> 8) % 4096) * 4096;
			if (pread(fd, buf, 4096, off) != 4096) die("pread");
		}
		return close(fd);
	}
	fprintf(stderr, "synctool: unknown mode %s\n", mode);
	return 2;
}
