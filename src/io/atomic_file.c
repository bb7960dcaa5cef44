/* Atomic whole-file writes (atomic_file.h). */
#define _POSIX_C_SOURCE 200809L /* getpid, fsync, fileno */

#include "io/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "systems/msg.h"

int atomic_write_file(const char* path, const void* data, size_t size, char* msg, int msg_size)
{
    char tmp[4096];
    int len = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof tmp) {
        set_msg(msg, msg_size, "%s: path too long", path);
        return -1;
    }
    FILE* f = fopen(tmp, "wb");
    if (f == NULL) {
        set_msg(msg, msg_size, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    int ok = size == 0 || fwrite(data, 1, size, f) == size;
    /* fsync before the rename: after a crash the name then holds the old
     * file or the complete new one, never a prefix of the new one. */
    if (ok) ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    int err = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    const char* step = ok ? "rename" : "write";
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        remove(tmp);
        set_msg(msg, msg_size, "%s to %s failed: %s (the previous file, if any, is unchanged)",
                step, step[0] == 'r' ? path : tmp, err != 0 ? strerror(err) : "I/O error");
        return -1;
    }
    return 0;
}
