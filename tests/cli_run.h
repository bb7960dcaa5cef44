/* Running the built `shoal` binary from a test as a user or a script would:
 * posix_spawn with pipes (never system(), so no shell quoting gets in the
 * way), stdout and stderr read at once, the exit code kept; and the JSON
 * accessors the CLI tests share. Include it after defining _XOPEN_SOURCE
 * 700 (the pty of run_cli_with). The test process itself never starts
 * OpenMP: the threads run in the spawned binary. */
#ifndef SHOAL_TEST_CLI_RUN_H
#define SHOAL_TEST_CLI_RUN_H

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

typedef struct cli_output_t {
    int status; /* exit code; 128 + signal if the binary was killed */
    char* out;  /* stdout, NUL-terminated */
    char* err;  /* stderr (or what the terminal saw, with a pty), NUL-terminated */
} cli_output_t;

typedef struct buffer_t {
    char* data;
    size_t length;
    size_t capacity;
} buffer_t;

static inline void buffer_append(buffer_t* b, const char* data, size_t length)
{
    if (b->length + length + 1 > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (b->length + length + 1 > capacity) {
            capacity *= 2;
        }
        b->data = realloc(b->data, capacity);
        cr_assert_not_null(b->data);
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, data, length);
    b->length += length;
    b->data[b->length] = '\0';
}

/* Read both streams at once so that neither pipe can fill up and stall
 * the child. A pty's master reads EIO, not 0, once the child is gone. */
static inline void drain(int out_fd, int err_fd, buffer_t* out, buffer_t* err)
{
    struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    buffer_t* targets[2] = {out, err};
    int open_count = 2;
    while (open_count > 0) {
        if (poll(fds, 2, -1) < 0) {
            cr_assert_eq(errno, EINTR, "poll: %s", strerror(errno));
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) {
                continue;
            }
            char chunk[4096];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                buffer_append(targets[i], chunk, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_count -= 1;
            }
        }
    }
}

/* Run `shoal <args...>` (args NULL-terminated). With tty_stderr the
 * child's stderr is the slave side of a pseudo-terminal; returns 0 if no
 * pty is available then (the caller skips). */
static inline int run_cli_with(const char* const* args, int tty_stderr, cli_output_t* result)
{
    const char* argv[32] = {SHOAL_CLI_PATH};
    int argc = 1;
    for (; args[argc - 1] != NULL; ++argc) {
        cr_assert_lt(argc, 31);
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;

    int out_pipe[2];
    int err_pair[2]; /* [0] read by us, [1] given to the child */
    cr_assert_eq(pipe(out_pipe), 0);
    if (tty_stderr) {
        int master = posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
            close(out_pipe[0]);
            close(out_pipe[1]);
            if (master >= 0) {
                close(master);
            }
            return 0;
        }
        int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
        cr_assert_geq(slave, 0, "open pty slave: %s", strerror(errno));
        err_pair[0] = master;
        err_pair[1] = slave;
    } else {
        cr_assert_eq(pipe(err_pair), 0);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pair[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
    posix_spawn_file_actions_addclose(&actions, err_pair[0]);
    posix_spawn_file_actions_addclose(&actions, err_pair[1]);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "cannot spawn %s: %s", SHOAL_CLI_PATH, strerror(rc));
    close(out_pipe[1]);
    close(err_pair[1]);

    buffer_t out = {0}, err = {0};
    buffer_append(&out, "", 0);
    buffer_append(&err, "", 0);
    drain(out_pipe[0], err_pair[0], &out, &err);

    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        cr_assert_eq(errno, EINTR);
    }
    result->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    result->out = out.data;
    result->err = err.data;
    return 1;
}

static inline void run_cli(const char* const* args, cli_output_t* result) { run_cli_with(args, 0, result); }

static inline void output_free(cli_output_t* result)
{
    free(result->out);
    free(result->err);
}

/* Run with --json, insist on success and exactly one JSON object. */
static inline cJSON* run_json(const char* const* args)
{
    cli_output_t r;
    run_cli(args, &r);
    cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
    size_t length = strlen(r.out);
    cr_assert(length > 0 && r.out[length - 1] == '\n', "stdout must end in a newline: [%s]", r.out);
    const char* end = NULL;
    /* require_null_terminated: anything after the object but blanks fails. */
    cJSON* root = cJSON_ParseWithOpts(r.out, &end, 1);
    cr_assert_not_null(root, "stdout is not one JSON value: [%s]", r.out);
    cr_assert(cJSON_IsObject(root));
    cr_assert_eq(strchr(r.err, '\r'), NULL, "no progress output with --json");
    output_free(&r);
    return root;
}

static inline const char* json_string(const cJSON* root, const char* key)
{
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, key);
    cr_assert(cJSON_IsString(item), "\"%s\" must be a string", key);
    return item->valuestring;
}

static inline double json_number(const cJSON* root, const char* key)
{
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(root, key);
    cr_assert(cJSON_IsNumber(item), "\"%s\" must be a number", key);
    return item->valuedouble;
}

static inline int matches(const char* text, const char* pattern)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0, "bad regex %s", pattern);
    int found = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    return found;
}

#endif /* SHOAL_TEST_CLI_RUN_H */
