// A process that a trace attaches to (strace -p) once it has opened its log:
// the trace shows fstat, lseek and writes of an fd it never saw opened, then
// the log reopened with O_CREAT|O_APPEND, as a daemon does on a signal.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
	int fd = open("log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	write(fd, "start\n", 6);
	sleep(1); // the trace attaches here
	struct stat st;
	fstat(fd, &st);
	write(fd, "attached\n", 9);
	lseek(fd, 0, SEEK_END);
	close(fd);
	fd = open("log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	fstat(fd, &st);
	write(fd, "reopened\n", 9);
	close(fd);
	int d = fcntl(1, F_DUPFD, 10);
	close(d);
	return 0;
}
