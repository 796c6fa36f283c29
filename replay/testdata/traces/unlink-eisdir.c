/* What rm -r does on a directory: unlink, which fails with EISDIR, then rmdir. */
#include <unistd.h>
#include <errno.h>
int main(void) {
	if (unlink("d") < 0 && errno == EISDIR)
		return rmdir("d") < 0;
	return 0;
}
