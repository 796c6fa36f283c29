// Calls across file systems: a rename and a link from the working directory
// (ext4) into /dev/shm (tmpfs) fail with EXDEV; copy_file_range from a file
// in /dev/shm to one here fails with EXDEV too, and the program copies
// with read and write instead.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
	int fd = open("a", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, "hello\n", 6);
	close(fd);
	rename("a", "/dev/shm/iosim-xdev-a");           // EXDEV
	link("a", "/dev/shm/iosim-xdev-l");             // EXDEV
	int s = open("/dev/shm/iosim-xdev-s", O_RDWR | O_CREAT | O_TRUNC, 0600);
	write(s, "shared\n", 7);
	int d = open("b", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	off_t in = 0, out = 0;
	copy_file_range(s, &in, d, &out, 7, 0);         // EXDEV
	char buf[16];
	ssize_t n = pread(s, buf, sizeof buf, 0);
	write(d, buf, n);
	close(s);
	close(d);
	unlink("/dev/shm/iosim-xdev-s");
	rename("a", "c");
	return 0;
}
