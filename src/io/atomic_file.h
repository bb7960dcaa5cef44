/* Whole-file writes that never leave a half-written destination. */
#ifndef SHOAL_IO_ATOMIC_FILE_H
#define SHOAL_IO_ATOMIC_FILE_H

#include <stddef.h>

/* Write `size` bytes to `path` atomically: into `path`.tmp.<pid> in the same
 * directory (rename is atomic only within a file system), flushed and
 * fsynced, then renamed over `path`. Returns 0; on failure -1 with a message
 * naming the file and the system's reason, the temporary file removed and
 * `path` untouched. */
int atomic_write_file(const char* path, const void* data, size_t size, char* msg, int msg_size);

#endif /* SHOAL_IO_ATOMIC_FILE_H */
