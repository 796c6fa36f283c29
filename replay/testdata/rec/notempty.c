// rmdir of directories that held entries before the trace (ENOTEMPTY), as
// git and rm try it; a listing then shows the entries, which the program
// removes before its rmdir succeeds; a rename onto a directory with
// entries fails the same way. Run in a directory holding d/ (with x and
// y), e/ (with z) and f/ (empty).
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
	rmdir("d");          // ENOTEMPTY
	rename("f", "e");    // ENOTEMPTY
	DIR *dir = opendir("d");
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		char p[300];
		if (de->d_name[0] == '.') continue;
		snprintf(p, sizeof p, "d/%s", de->d_name);
		unlink(p);
	}
	closedir(dir);
	rmdir("d");          // 0
	rmdir("e");          // ENOTEMPTY
	return 0;
}
