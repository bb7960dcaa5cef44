/* The files the `shoal` command ships with, found relative to its own
 * executable (cli/data_dir.c says where and why). */
#ifndef SHOAL_CLI_DATA_DIR_H
#define SHOAL_CLI_DATA_DIR_H

#include <stddef.h>

#define CLI_PATH_MAX 4096

/* The directories searched, in order (at most `max`, which must be >= 2),
 * those that exist, as absolute paths: the install prefix's share/shoal
 * beside its bin/, then the executable's own directory (a build tree).
 * Returns how many were filled (0: none, or the executable's place is
 * unknown). */
int cli_data_dirs(char dirs[][CLI_PATH_MAX], int max);

/* Put into `out` the first existing DIR/relative over cli_data_dirs; returns
 * 1 if one exists, 0 otherwise (out is then unspecified). */
int cli_find_data(const char* relative, char* out, size_t size);

#endif /* SHOAL_CLI_DATA_DIR_H */
