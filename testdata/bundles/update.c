/* The configuration update, unsafe or safe (argv[1]), run in the directory
 * that holds "config". safe: write config.tmp, fsync it, rename it over
 * config, fsync the directory, print "Updated". unsafe: the same without the
 * two fsyncs. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int safe = argc > 1 && strcmp(argv[1], "safe") == 0;
	int fd = open("config.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "new\n", 4) != 4 || (safe && fsync(fd) != 0) || close(fd) != 0)
		return 1;
	if (rename("config.tmp", "config") != 0)
		return 1;
	if (safe) {
		int dir = open(".", O_RDONLY | O_DIRECTORY);
		if (dir < 0 || fsync(dir) != 0 || close(dir) != 0)
			return 1;
	}
	printf("Updated\n");
	return 0;
}
