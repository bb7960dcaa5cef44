/* Test runner for the ThreadSanitizer build (criterion/criterion.h says
 * why Criterion itself cannot be used there). Runs every registered test,
 * or those whose "suite/name" matches --filter GLOB, each in a forked child
 * (the parent never starts a thread or an OpenMP region), up to --jobs at a
 * time, each with --timeout seconds. A test fails on a failed assertion, a
 * crash, a ThreadSanitizer report (TSan exits with code 66) or the timeout.
 *   shoal_tests_tsan [--filter GLOB] [--jobs N] [--timeout S] [--list] */
#define _POSIX_C_SOURCE 200809L
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criterion/criterion.h"

static shim_test_t* registered;
static shim_suite_t* suites;
static int failed_here; /* in a child: a cr_expect* failed */

void shim_register(shim_test_t* test)
{
    test->next = registered;
    registered = test;
}

void shim_register_suite(shim_suite_t* suite)
{
    suite->next = suites;
    suites = suite;
}

/* In the child: the suite's and the test's init, the test, their fini. */
static void run_test(const shim_test_t* t)
{
    const shim_options_t* suite = NULL;
    for (const shim_suite_t* s = suites; s; s = s->next)
        if (strcmp(s->name, t->suite) == 0) suite = s->options;
    if (suite && suite->init) suite->init();
    if (t->options->init) t->options->init();
    t->fn();
    if (t->options->fini) t->options->fini();
    if (suite && suite->fini) suite->fini();
}

void shim_fail(const char* file, int line, int fatal, const char* expr, const char* format, ...)
{
    fprintf(stderr, "%s:%d: %s failed: %s", file, line, fatal ? "assertion" : "expectation", expr);
    if (format[0] != '\0') {
        fputs(": ", stderr);
        va_list ap;
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    failed_here = 1;
    if (fatal) {
        fflush(NULL);
        exit(1);
    }
}

void shim_log(const char* format, ...)
{
    va_list ap;
    va_start(ap, format);
    fputs("[info] ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
}

typedef struct running {
    pid_t pid;
    const shim_test_t* test;
    time_t start;
} running_t;

static int by_name(const void* a, const void* b)
{
    const shim_test_t* x = *(const shim_test_t* const*)a;
    const shim_test_t* y = *(const shim_test_t* const*)b;
    int c = strcmp(x->suite, y->suite);
    return c != 0 ? c : strcmp(x->name, y->name);
}

static int finish(const running_t* r, int status, int* failures)
{
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        printf("[PASS] %s/%s (%ld s)\n", r->test->suite, r->test->name, (long)(time(NULL) - r->start));
    } else {
        if (WIFSIGNALED(status))
            printf("[FAIL] %s/%s: signal %d%s\n", r->test->suite, r->test->name, WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
        else
            printf("[FAIL] %s/%s: exit code %d%s\n", r->test->suite, r->test->name, WEXITSTATUS(status),
                   WEXITSTATUS(status) == 66 ? " (ThreadSanitizer report)" : "");
        (*failures)++;
    }
    fflush(stdout);
    return ok;
}

int main(int argc, char** argv)
{
    const char* filters[64];
    int filter_count = 0;
    int jobs = 1, list = 0;
    unsigned timeout = 1800;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc && filter_count < 64)
            filters[filter_count++] = argv[++i];
        else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            timeout = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--list") == 0)
            list = 1;
        else {
            fprintf(stderr, "usage: %s [--filter GLOB] [--jobs N] [--timeout S] [--list]\n", argv[0]);
            return 2;
        }
    }
    if (jobs < 1) jobs = 1;
    size_t count = 0;
    for (shim_test_t* t = registered; t; t = t->next) count++;
    shim_test_t** tests = malloc((count ? count : 1) * sizeof *tests);
    running_t* slots = calloc((size_t)jobs, sizeof *slots);
    if (!tests || !slots) return 1;
    size_t n = 0;
    char full[512];
    for (shim_test_t* t = registered; t; t = t->next) {
        snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
        int match = filter_count == 0;
        for (int f = 0; f < filter_count && !match; ++f) match = fnmatch(filters[f], full, 0) == 0;
        if (match) tests[n++] = t;
    }
    qsort(tests, n, sizeof *tests, by_name);
    if (list) {
        for (size_t i = 0; i < n; ++i) printf("%s/%s\n", tests[i]->suite, tests[i]->name);
        return 0;
    }
    if (n == 0) {
        fprintf(stderr, "no test matches the filters\n");
        return 1;
    }
    int failures = 0, active = 0;
    time_t start = time(NULL);
    size_t next = 0;
    while (next < n || active > 0) {
        while (next < n && active < jobs) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            if (pid == 0) {
                alarm(timeout);
                run_test(tests[next]);
                fflush(NULL);
                exit(failed_here ? 1 : 0);
            }
            for (int s = 0; s < jobs; ++s)
                if (slots[s].pid == 0) {
                    slots[s] = (running_t){pid, tests[next], time(NULL)};
                    break;
                }
            next++;
            active++;
        }
        int status;
        pid_t done = wait(&status);
        if (done < 0) break;
        for (int s = 0; s < jobs; ++s)
            if (slots[s].pid == done) {
                finish(&slots[s], status, &failures);
                slots[s].pid = 0;
                active--;
                break;
            }
    }
    printf("tsan runner: %zu tests, %d failed, %ld s\n", n, failures, (long)(time(NULL) - start));
    free(tests);
    free(slots);
    return failures == 0 ? 0 : 1;
}
