/* Where the `shoal` command finds the files it ships with (scenarios, the
 * viewer): beside its own executable, never at a path fixed when it was
 * built, so an installed prefix can be moved and a build tree works from
 * any directory.
 *
 * - Installed: the command is PREFIX/bin/shoal and the files are under
 *   PREFIX/share/shoal/ (CMakeLists.txt), so the data directory is
 *   SHOAL_DATA_FROM_BIN (../share/shoal with the usual directories) from the
 *   executable's directory: relative, so the prefix can be moved.
 * - Build tree: the configure step links scenarios/ into the build
 *   directory next to the executable (CMakeLists.txt), so the data
 *   directory is the executable's own directory.
 * The executable is found through /proc/self/exe (the real file, whatever
 * link or PATH entry started it). */
#define _XOPEN_SOURCE 700 /* realpath */

#include "cli/data_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SHOAL_DATA_FROM_BIN
#define SHOAL_DATA_FROM_BIN "../share/shoal"
#endif

/* The executable's directory, without the trailing slash; 0 if unknown. */
static int exe_dir(char* out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0 || (size_t)n >= size - 1) return 0;
    out[n] = '\0';
    char* slash = strrchr(out, '/');
    if (slash == NULL) return 0;
    *slash = '\0';
    return 1;
}

/* `path` made absolute and free of "..", into dirs[*count] when it is an
 * existing directory. */
static void add_dir(const char* path, char dirs[][CLI_PATH_MAX], int* count)
{
    char* real = realpath(path, NULL);
    struct stat st;
    if (real != NULL && strlen(real) < CLI_PATH_MAX && stat(real, &st) == 0 && S_ISDIR(st.st_mode))
        memcpy(dirs[(*count)++], real, strlen(real) + 1);
    free(real);
}

int cli_data_dirs(char dirs[][CLI_PATH_MAX], int max)
{
    char exe[CLI_PATH_MAX], data[CLI_PATH_MAX + sizeof SHOAL_DATA_FROM_BIN];
    if (max < 2 || !exe_dir(exe, sizeof exe)) return 0;
    int count = 0;
    snprintf(data, sizeof data, "%s/" SHOAL_DATA_FROM_BIN, exe);
    add_dir(data, dirs, &count);
    add_dir(exe, dirs, &count);
    return count;
}

int cli_find_data(const char* relative, char* out, size_t size)
{
    char dirs[2][CLI_PATH_MAX];
    int count = cli_data_dirs(dirs, 2);
    for (int i = 0; i < count; ++i) {
        int n = snprintf(out, size, "%s/%s", dirs[i], relative);
        if (n > 0 && (size_t)n < size && access(out, F_OK) == 0) return 1;
    }
    return 0;
}
