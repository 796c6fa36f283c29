/* Opens a file twice and reads it through the second fd, 10 bytes at a time. */
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char buf[10];
	int a = open(argv[1], O_RDONLY);
	int b = open(argv[1], O_RDONLY);
	while (read(b, buf, sizeof buf) > 0)
		;
	close(b);
	close(a);
	return 0;
}
