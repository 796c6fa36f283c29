/* Two threads and main share one file: each thread writes its own private
   file and its slot of the shared one (pwrite), waits at a barrier, then
   reads the whole shared file, appends to it through the shared fd and
   reads the offset back; then, without barriers, both write records through
   the shared fd and read its offset after each. main fsyncs and reads the
   result. What each read returns depends on how far the other thread got. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int shared;
static pthread_barrier_t bar;

static void *worker(void *arg) {
	long id = (long)arg;
	char name[32], rec[64], buf[512];
	snprintf(name, sizeof name, "private-%ld.dat", id);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 4; i++) {
		int n = snprintf(rec, sizeof rec, "thread %ld record %d\n", id, i);
		write(fd, rec, n);
		memset(rec, 'a' + id, 16);
		pwrite(shared, rec, 16, (id - 1) * 64 + i * 16);
	}
	fsync(fd);
	pthread_barrier_wait(&bar);
	ssize_t got = pread(shared, buf, sizeof buf, 0);
	struct stat st;
	fstat(shared, &st);
	int n = snprintf(rec, sizeof rec, "saw %zd bytes, size %lld\n", got, (long long)st.st_size);
	write(fd, rec, n);
	pthread_barrier_wait(&bar);
	n = snprintf(rec, sizeof rec, "append from %ld\n", id);
	write(shared, rec, n);
	pthread_barrier_wait(&bar);
	off_t end = lseek(shared, 0, SEEK_CUR);
	n = snprintf(rec, sizeof rec, "offset %lld\n", (long long)end);
	write(fd, rec, n);
	memset(rec, 'a' + id, 8);
	for (int i = 0; i < 4; i++) {
		write(shared, rec, 8);
		lseek(shared, 0, SEEK_CUR);
	}
	fdatasync(fd);
	close(fd);
	return NULL;
}

int main(void) {
	pthread_t t[2];
	shared = open("shared.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	lseek(shared, 128, SEEK_SET);
	pthread_barrier_init(&bar, NULL, 2);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fsync(shared);
	char buf[512];
	ssize_t got = pread(shared, buf, sizeof buf, 0);
	printf("%zd\n", got);
	close(shared);
	return 0;
}
