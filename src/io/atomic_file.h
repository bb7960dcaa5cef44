/* Whole-file writes that never leave a half-written destination. */
#ifndef SHOAL_IO_ATOMIC_FILE_H
#define SHOAL_IO_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Write `size` bytes to `path` atomically: into `path`.tmp.<pid> in the same
 * directory (rename is atomic only within a file system), flushed and
 * fsynced, then renamed over `path`. Returns 0; on failure -1 with a message
 * naming the file and the system's reason, the temporary file removed and
 * `path` untouched. */
int atomic_write_file(const char* path, const void* data, size_t size, char* msg, int msg_size);

/* The same, streamed, for output too large to build in memory first (a
 * trace of millions of events): atomic_file_open creates the temporary
 * file, the caller writes through `f`, and atomic_file_commit renames it
 * over `path`; on failure it removes the temporary file and leaves `path`
 * untouched. */
typedef struct atomic_file_t {
    FILE* f;
    const char* path; /* not copied: must outlive the atomic_file_t */
    char tmp[4096];
} atomic_file_t;

/* Returns 0, or -1 with the message (nothing is left to abort). */
int atomic_file_open(atomic_file_t* file, const char* path, char* msg, int msg_size);
/* Flush, fsync, close and rename. Returns 0, or -1 with the message (a
 * write error seen on `f` earlier fails it too). */
int atomic_file_commit(atomic_file_t* file, char* msg, int msg_size);

#endif /* SHOAL_IO_ATOMIC_FILE_H */
