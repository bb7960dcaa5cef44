/* The one output routine (atomic_file.h). */
#define _POSIX_C_SOURCE 200809L /* getpid, fsync, fileno, fdopen, lstat, readlink, kill */

#include "io/atomic_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"

enum { DEST_REPLACE, DEST_THROUGH, DEST_REFUSED };

/* What is at `path`, and so how it is written. `mode` receives a regular
 * file's permission bits (-1 when absent). */
static int classify(const char* path, int* mode, char* msg, int msg_size)
{
    struct stat st;
    *mode = -1;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return DEST_REPLACE;
        set_msg(msg, msg_size, "cannot write %s: %s", path, strerror(errno));
        return DEST_REFUSED;
    }
    if (S_ISREG(st.st_mode)) {
        *mode = (int)(st.st_mode & 07777);
        return DEST_REPLACE;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return DEST_THROUGH;
    if (S_ISLNK(st.st_mode)) {
        char target[1024];
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        set_msg(msg, msg_size,
                "refusing to write %s: it is a symbolic link (to %s); outputs neither follow "
                "nor replace links: give the target's path instead",
                path, n > 0 ? target : "?");
        return DEST_REFUSED;
    }
    set_msg(msg, msg_size, "refusing to write %s: it is %s, not a regular file", path,
            S_ISDIR(st.st_mode)    ? "a directory"
            : S_ISBLK(st.st_mode)  ? "a block device"
            : S_ISSOCK(st.st_mode) ? "a socket"
                                   : "not a file");
    return DEST_REFUSED;
}

/* Remove `path`.tmp.N left by a process N that no longer exists (a save
 * killed half-way). Only regular files of that exact name pattern; a live
 * process's temporary (another save under way) is left alone. */
static void remove_stale_temporaries(const char* path)
{
    const char* slash = strrchr(path, '/');
    char dir[4096];
    const char* base = slash ? slash + 1 : path;
    if (slash) {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) return;
        memcpy(dir, path, n);
        dir[n ? n : 1] = '\0';
        if (n == 0) dir[0] = '/';
    } else {
        strcpy(dir, ".");
    }
    size_t base_len = strlen(base);
    DIR* d = opendir(dir);
    if (!d) return;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        const char* name = e->d_name;
        if (strncmp(name, base, base_len) != 0 || strncmp(name + base_len, ".tmp.", 5) != 0) continue;
        const char* digits = name + base_len + 5;
        if (*digits == '\0' || strlen(digits) > 9) continue;
        int all_digits = 1;
        for (const char* c = digits; *c; ++c) all_digits &= isdigit((unsigned char)*c) != 0;
        if (!all_digits) continue;
        long pid = strtol(digits, NULL, 10);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char full[8192];
        if (snprintf(full, sizeof full, "%s/%s", dir, name) >= (int)sizeof full) continue;
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode)) unlink(full);
    }
    closedir(d);
}

/* Open an existing device or FIFO for writing, without following a link
 * that replaced it since it was looked at. */
static FILE* open_through(const char* path, char* msg, int msg_size)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        set_msg(msg, msg_size, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    FILE* f = fdopen(fd, "wb");
    if (!f) {
        set_msg(msg, msg_size, "cannot write %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int atomic_file_open(atomic_file_t* file, const char* path, char* msg, int msg_size)
{
    return atomic_file_open_with(file, path, 0, msg, msg_size);
}

int atomic_file_open_with(atomic_file_t* file, const char* path, int flags, char* msg, int msg_size)
{
    file->f = NULL;
    file->path = path;
    file->direct = 0;
    file->flags = flags;
    file->tmp[0] = '\0';
    int mode;
    int dest = classify(path, &mode, msg, msg_size);
    if (dest == DEST_REFUSED) return -1;
    if (dest == DEST_REPLACE && mode >= 0 && (flags & ATOMIC_FILE_NO_REPLACE)) {
        set_msg(msg, msg_size, "refusing to replace %s: the file exists", path);
        return -1;
    }
    if (dest == DEST_THROUGH && (flags & ATOMIC_FILE_REGULAR_ONLY)) {
        set_msg(msg, msg_size,
                "cannot write %s: it is a device or FIFO, and this output needs a "
                "regular file",
                path);
        return -1;
    }
    if (dest == DEST_THROUGH) {
        file->f = open_through(path, msg, msg_size);
        file->direct = 1;
        return file->f ? 0 : -1;
    }
    int len = snprintf(file->tmp, sizeof file->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof file->tmp) {
        set_msg(msg, msg_size, "%s: path too long", path);
        return -1;
    }
    remove_stale_temporaries(path);
    /* O_EXCL | O_NOFOLLOW: never write through a file or link that someone
     * placed under the temporary name. */
    int fd = open(file->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        set_msg(msg, msg_size, "cannot create %s: %s", file->tmp, strerror(errno));
        return -1;
    }
    if (mode >= 0) (void)fchmod(fd, (mode_t)mode); /* the replaced file's permissions */
    file->f = fdopen(fd, "wb");
    if (file->f == NULL) {
        set_msg(msg, msg_size, "cannot create %s: %s", file->tmp, strerror(errno));
        close(fd);
        remove(file->tmp);
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
     * file or the complete new one, never a prefix of the new one. A device
     * or FIFO has nothing to sync (fsync fails there with EINVAL). */
    if (ok) ok = fflush(f) == 0 && (file->direct || fsync(fileno(f)) == 0);
    int err = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    if (file->direct) {
        if (!ok)
            set_msg(msg, msg_size, "write to %s failed: %s", file->path,
                    err != 0 ? strerror(err) : "I/O error");
        return ok ? 0 : -1;
    }
    const char* step = ok ? "rename" : "write";
    if (ok && (file->flags & ATOMIC_FILE_NO_REPLACE)) {
        /* link() fails with EEXIST rather than replace: no window between
         * a check and the rename. A file system without hard links gets
         * the check and the rename. */
        struct stat st;
        if (link(file->tmp, file->path) == 0) {
            remove(file->tmp);
            return 0;
        }
        if (errno == EEXIST || lstat(file->path, &st) == 0) {
            remove(file->tmp);
            set_msg(msg, msg_size,
                    "refusing to replace %s: the file appeared while it was being "
                    "written",
                    file->path);
            return -1;
        }
    }
    if (ok && rename(file->tmp, file->path) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        remove(file->tmp);
        set_msg(msg, msg_size, "%s to %s failed: %s (the previous file, if any, is unchanged)", step,
                step[0] == 'r' ? file->path : file->tmp, err != 0 ? strerror(err) : "I/O error");
        return -1;
    }
    return 0;
}

void atomic_file_discard(atomic_file_t* file)
{
    if (file->f != NULL) fclose(file->f);
    file->f = NULL;
    if (!file->direct && file->tmp[0] != '\0') remove(file->tmp);
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

FILE* output_open_in_place(const char* path, char* msg, int msg_size)
{
    int mode;
    int dest = classify(path, &mode, msg, msg_size);
    if (dest == DEST_REFUSED) return NULL;
    if (dest == DEST_THROUGH) return open_through(path, msg, msg_size);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0) {
        set_msg(msg, msg_size, "%s: cannot create: %s", path, strerror(errno));
        return NULL;
    }
    FILE* f = fdopen(fd, "wb");
    if (!f) {
        set_msg(msg, msg_size, "cannot create %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
