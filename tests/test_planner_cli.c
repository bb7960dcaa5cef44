/* `shoal experiment planner` as a script sees it: a short run (2 runs of
 * 2 simulated seconds per cell) exits 0 and prints one JSON object with
 * the keys the issue names. The binary is spawned (posix_spawn); the test
 * process itself never starts OpenMP. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

typedef struct text_t {
    char* data;
    size_t length, capacity;
} text_t;

static void text_append(text_t* t, const char* data, size_t length)
{
    if (t->length + length + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 4096;
        while (t->length + length + 1 > capacity) capacity *= 2;
        t->data = realloc(t->data, capacity);
        cr_assert_not_null(t->data);
        t->capacity = capacity;
    }
    memcpy(t->data + t->length, data, length);
    t->length += length;
    t->data[t->length] = '\0';
}

/* Run `shoal <args...>` (NULL-terminated); stdout and stderr are read
 * together so neither pipe can stall the child. Returns the exit code. */
static int run_shoal(const char* const* args, text_t* out, text_t* err)
{
    const char* argv[16] = {SHOAL_CLI_PATH};
    int argc = 1;
    for (; args[argc - 1] != NULL; ++argc) {
        cr_assert_lt(argc, 15);
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;
    int po[2], pe[2];
    cr_assert_eq(pipe(po), 0);
    cr_assert_eq(pipe(pe), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, po[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pe[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, po[0]);
    posix_spawn_file_actions_addclose(&actions, po[1]);
    posix_spawn_file_actions_addclose(&actions, pe[0]);
    posix_spawn_file_actions_addclose(&actions, pe[1]);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "cannot spawn %s: %s", SHOAL_CLI_PATH, strerror(rc));
    close(po[1]);
    close(pe[1]);
    text_append(out, "", 0);
    text_append(err, "", 0);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    text_t* targets[2] = {out, err};
    int open_count = 2;
    while (open_count > 0) {
        if (poll(fds, 2, -1) < 0) {
            cr_assert_eq(errno, EINTR);
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char chunk[4096];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                text_append(targets[i], chunk, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_count -= 1;
            }
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const cJSON* object_at(const cJSON* parent, const char* key)
{
    const cJSON* o = cJSON_GetObjectItemCaseSensitive(parent, key);
    cr_assert(cJSON_IsObject(o), "\"%s\" must be an object", key);
    return o;
}

static double number_at(const cJSON* parent, const char* key)
{
    const cJSON* n = cJSON_GetObjectItemCaseSensitive(parent, key);
    cr_assert(cJSON_IsNumber(n), "\"%s\" must be a number", key);
    return n->valuedouble;
}

Test(planner_cli, short_run_prints_the_tables_as_json, .timeout = 600)
{
    const char* args[] = {"experiment", "planner", "--runs", "2", "--seconds", "2", "--json", NULL};
    text_t out = {0}, err = {0};
    int status = run_shoal(args, &out, &err);
    cr_assert_eq(status, 0, "exit %d, stderr: %s", status, err.data);
    cr_assert(out.length > 0 && out.data[out.length - 1] == '\n', "stdout must end in a newline");
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithOpts(out.data, &end, 1);
    cr_assert_not_null(root, "stdout is not one JSON value: [%s]", out.data);
    cr_assert(cJSON_IsObject(root));

    static const char* const configs[] = {"2d_seek", "3d_seek", "2d_dyn_pursue", "3d_pursue", "3d_meet"};
    static const char* const strategies[] = {"single_step", "uniform", "adaptive"};
    const cJSON* f6 = object_at(root, "figure6");
    for (int c = 0; c < 5; ++c) {
        const cJSON* co = object_at(f6, configs[c]);
        for (int s = 0; s < 3; ++s) {
            const cJSON* so = object_at(co, strategies[s]);
            double g = number_at(so, "goodness_mean");
            cr_assert(g >= 0.0 && g <= 1.0, "%s %s goodness_mean %g outside [0, 1]", configs[c],
                      strategies[s], g);
            cr_assert_geq(number_at(so, "collisions"), 0.0);
            cr_assert_gt(number_at(so, "ms_per_search"), 0.0, "%s %s: no searches timed", configs[c],
                         strategies[s]);
            cr_assert_geq(number_at(so, "states_per_search"), 1.0);
        }
    }
    const cJSON* f7 = object_at(root, "figure7");
    for (int d = 0; d < 2; ++d) {
        const cJSON* dobj = object_at(f7, d == 0 ? "2d" : "3d");
        cr_assert_eq(number_at(dobj, "controls"), d == 0 ? 17.0 : 121.0);
        for (int s = 0; s < 3; ++s)
            cr_assert_gt(number_at(object_at(dobj, strategies[s]), "ms_per_search"), 0.0);
    }
    const cJSON* battle = object_at(root, "battle");
    cr_assert_eq(number_at(battle, "ships"), 30.0);
    for (int s = 0; s < 3; ++s) {
        const cJSON* so = object_at(battle, strategies[s]);
        cr_assert_gt(number_at(so, "wall_per_sim_second"), 0.0);
        number_at(so, "goodness_mean");
        number_at(so, "collisions");
    }
    cJSON_Delete(root);
    free(out.data);
    free(err.data);
}

Test(planner_cli, bad_option_is_a_usage_error)
{
    const char* args[] = {"experiment", "planner", "--runs", "0", NULL};
    text_t out = {0}, err = {0};
    cr_assert_eq(run_shoal(args, &out, &err), 2);
    cr_assert_not_null(strstr(err.data, "--runs"), "stderr: %s", err.data);
    free(out.data);
    free(err.data);
}
