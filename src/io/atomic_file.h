/* Every file the library and the command write goes through here: one rule
 * for what may be at the destination.
 *
 * - Absent, or a regular file: written atomically. The bytes go into
 *   `path`.tmp.<pid> in the same directory (rename is atomic only within a
 *   file system), created exclusively (never through a link planted under
 *   that name), flushed and fsynced, then renamed over `path`; a regular
 *   file's permission bits are kept. Readers see the old file or the whole
 *   new one, never a prefix.
 * - A character device or a FIFO (/dev/null, /dev/stdout, a named pipe):
 *   written through, as shell redirection does. Replacing one by a regular
 *   file (`--save /dev/null` as root) would break the system.
 * - Anything else is refused, naming what it is: a symbolic link (neither
 *   followed nor replaced: give the target's path), a directory, a block
 *   device, a socket.
 * - Temporaries of `path` that a killed writer left behind (`path`.tmp.N
 *   whose process N is gone) are removed when `path` is next written. */
#ifndef SHOAL_IO_ATOMIC_FILE_H
#define SHOAL_IO_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Write `size` bytes to `path` by the rule above. Returns 0; on failure -1
 * with a message naming the file and the reason, the temporary file removed
 * and `path` untouched. */
int atomic_write_file(const char* path, const void* data, size_t size, char* msg, int msg_size);

/* The same, streamed, for output too large to build in memory first (a trace
 * of millions of events): atomic_file_open opens the temporary file (or the
 * device or FIFO itself), the caller writes through `f`, and
 * atomic_file_commit renames it over `path`; on failure it removes the
 * temporary file and leaves `path` untouched. */
typedef struct atomic_file_t {
    FILE* f;
    const char* path; /* not copied: must outlive the atomic_file_t */
    int direct;       /* 1: writing to `path` itself (a device or FIFO) */
    int flags;        /* ATOMIC_FILE_* of atomic_file_open_with */
    char tmp[4096];
} atomic_file_t;

/* Returns 0, or -1 with the message (nothing is left to abort). */
int atomic_file_open(atomic_file_t* file, const char* path, char* msg, int msg_size);

/* Flags of atomic_file_open_with. */
enum {
    /* Never replace a regular file: refused at open when `path` exists, and
     * the commit links the temporary file to `path` instead of renaming it
     * over, so a file that appears there meanwhile is not replaced either
     * (the commit then fails, and the temporary file is removed). Devices
     * and FIFOs are still written through. */
    ATOMIC_FILE_NO_REPLACE = 1,
    /* Refuse a device or FIFO: for writers that need a file to seek in (a
     * database written by name, through file->tmp). */
    ATOMIC_FILE_REGULAR_ONLY = 2
};

/* atomic_file_open with ATOMIC_FILE_* flags. A writer that opens the file
 * by name (a database library) writes to file->tmp, which exists and is
 * empty after this returns; `f` stays open on it and receives nothing, and
 * the commit fsyncs the file through it. */
int atomic_file_open_with(atomic_file_t* file, const char* path, int flags, char* msg, int msg_size);

/* Flush, fsync, close and rename. Returns 0, or -1 with the message (a
 * write error seen on `f` earlier fails it too). */
int atomic_file_commit(atomic_file_t* file, char* msg, int msg_size);

/* Give up: close the stream and remove the temporary file; `path` is left
 * as it was. For a device or FIFO what was written through stays written. */
void atomic_file_discard(atomic_file_t* file);

/* For output written as it goes, where a reader should see what was written
 * so far (a recording: a crashed run keeps its complete frames): the same
 * rule for the destination, but a regular file is truncated and written in
 * place instead of replaced. Returns the stream, or NULL with the message. */
FILE* output_open_in_place(const char* path, char* msg, int msg_size);

#endif /* SHOAL_IO_ATOMIC_FILE_H */
