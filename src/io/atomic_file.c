/* Atomic whole-file writes (atomic_file.h). */
#define _POSIX_C_SOURCE 200809L /* getpid, fsync, fileno */

#include "io/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "systems/msg.h"

int atomic_file_open(atomic_file_t* file, const char* path, char* msg, int msg_size)
{
    file->f = NULL;
    file->path = path;
    int len = snprintf(file->tmp, sizeof file->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof file->tmp) {
        set_msg(msg, msg_size, "%s: path too long", path);
        return -1;
    }
    file->f = fopen(file->tmp, "wb");
    if (file->f == NULL) {
        set_msg(msg, msg_size, "cannot create %s: %s", file->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int atomic_file_commit(atomic_file_t* file, char* msg, int msg_size)
{
    FILE* f = file->f;
    file->f = NULL;
    int ok = !ferror(f);
    /* fsync before the rename: after a crash the name then holds the old
     * file or the complete new one, never a prefix of the new one. */
    if (ok) ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    int err = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    const char* step = ok ? "rename" : "write";
    if (ok && rename(file->tmp, file->path) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        remove(file->tmp);
        set_msg(msg, msg_size, "%s to %s failed: %s (the previous file, if any, is unchanged)",
                step, step[0] == 'r' ? file->path : file->tmp,
                err != 0 ? strerror(err) : "I/O error");
        return -1;
    }
    return 0;
}

int atomic_write_file(const char* path, const void* data, size_t size, char* msg, int msg_size)
{
    atomic_file_t file;
    if (atomic_file_open(&file, path, msg, msg_size) != 0) return -1;
    /* A short write sets the stream's error flag: the commit then fails with
     * the write's reason and removes the temporary file. */
    if (size != 0) fwrite(data, 1, size, file.f);
    return atomic_file_commit(&file, msg, msg_size);
}
