// A parent reads a temp file's name from its child's pipe and renames the
// file before it waits for the child (as git repack does with
// pack-objects): the child lists the directory before it writes the name.
#include <dirent.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	mkdir("d", 0755);
	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		int fd = open("d/.tmp-1", O_CREAT | O_EXCL | O_WRONLY, 0644);
		write(fd, "pack", 4);
		close(fd);
		DIR *d = opendir("d");
		int n = 0;
		while (readdir(d)) n++;
		closedir(d);
		write(p[1], "d/.tmp-1\n", 9);
		close(p[1]);
		usleep(20000);
		_exit(n == 3 ? 0 : 1);
	}
	close(p[1]);
	char name[64] = {0};
	read(p[0], name, sizeof name - 1);
	name[strcspn(name, "\n")] = 0;
	rename(name, "d/pack-1");
	DIR *d = opendir("d");
	while (readdir(d)) ;
	closedir(d);
	int st;
	waitpid(c, &st, 0);
	return 0;
}
