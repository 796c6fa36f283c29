#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {
	open("/etc/hostname", O_RDONLY); open("/etc/hostname", O_RDONLY); open("/etc/hostname", O_RDONLY);
	syscall(SYS_close_range, 4, ~0U, 0);
	open("/etc/hostname", O_RDONLY);
	syscall(SYS_close_range, 3, 3, 4); /* CLOSE_RANGE_CLOEXEC */
	close(5);
	return 0;
}
