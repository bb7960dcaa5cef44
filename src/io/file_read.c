/* Bounded, non-blocking reads of regular files (file_read.h). */
#define _POSIX_C_SOURCE 200809L /* fdopen, fstat, fcntl */

#include "io/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"

void file_size_text(uint64_t bytes, char* out, int out_size)
{
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        set_msg(out, out_size, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        set_msg(out, out_size, "%llu MiB", (unsigned long long)(bytes >> 20));
    else
        set_msg(out, out_size, "%llu bytes", (unsigned long long)bytes);
}

static const char* kind_of(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO or pipe";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

FILE* file_open_regular(const char* path, uint64_t max_bytes, uint64_t* out_size,
                        file_read_error_t* out_error, char* msg, int msg_size)
{
    *out_size = 0;
    *out_error = FILE_READ_IO;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        set_msg(msg, msg_size, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        set_msg(msg, msg_size, "cannot read: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        set_msg(msg, msg_size, "not a regular file: it is %s", kind_of(st.st_mode));
        close(fd);
        return NULL;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes) {
        char limit[32];
        file_size_text(max_bytes, limit, sizeof limit);
        set_msg(msg, msg_size, "%llu bytes is above the %s limit", (unsigned long long)st.st_size, limit);
        *out_error = FILE_READ_TOO_LARGE;
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE* f = fdopen(fd, "rb");
    if (!f) {
        set_msg(msg, msg_size, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    *out_size = (uint64_t)st.st_size;
    *out_error = FILE_READ_OK;
    return f;
}

file_read_error_t file_read_all(const char* path, uint64_t max_bytes, void** out, size_t* out_size, char* msg,
                                int msg_size)
{
    *out = NULL;
    *out_size = 0;
    uint64_t size = 0;
    file_read_error_t error;
    if (max_bytes > (uint64_t)SIZE_MAX - 1) max_bytes = (uint64_t)SIZE_MAX - 1;
    FILE* f = file_open_regular(path, max_bytes, &size, &error, msg, msg_size);
    if (!f) return error;
    char* data = (char*)malloc((size_t)size + 1);
    if (!data) {
        set_msg(msg, msg_size, "out of memory for %llu bytes", (unsigned long long)size);
        fclose(f);
        return FILE_READ_NO_MEMORY;
    }
    errno = 0;
    size_t got = fread(data, 1, (size_t)size, f);
    if (got < size && ferror(f)) {
        set_msg(msg, msg_size, "read failed at byte %zu: %s", got, strerror(errno ? errno : EIO));
        free(data);
        fclose(f);
        return FILE_READ_IO;
    }
    fclose(f);
    data[got] = '\0';
    *out = data;
    *out_size = got;
    return FILE_READ_OK;
}
