/* Writes a 32 KiB file in 8 KiB writes, then reads it back through two fds: the
   second open is one the filecache interposer serves from memory. */
#include <fcntl.h>
#include <unistd.h>
int main(void) {
	static char buf[8192];
	int fd = open("out.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int k = 0; k < 4; k++) {
		for (int i = 0; i < 8192; i++)
			buf[i] = (char)((k * 8192 + i) * 7 % 251 + 1);
		write(fd, buf, 8192);
	}
	close(fd);
	int a = open("out.bin", O_RDONLY);
	int b = open("out.bin", O_RDONLY);
	read(b, buf, 8192);
	pread(a, buf, 1000, 3000);
	pread(b, buf, 1000, 3000);
	while (read(b, buf, 1500) > 0)
		;
	close(b);
	close(a);
	return 0;
}
