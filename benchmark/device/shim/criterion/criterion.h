/* A stand-in for the few Criterion macros tests/test_golden.c uses, so that its
 * hash functions build where Criterion is not installed (the device machine). */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#define cr_assert(c, ...)                                                                                    \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fprintf(stderr, "assert failed: %s\n", #c);                                                      \
            exit(3);                                                                                         \
        }                                                                                                    \
    } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL)
#define cr_assert_fail(...)                                                                                  \
    do {                                                                                                     \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        golden_fail = 1;                                                                                     \
        return;                                                                                              \
    } while (0)
#define cr_log_warn(...)                                                                                     \
    do {                                                                                                     \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
    } while (0)
#define Test(s, n, ...) static void s##_##n(void)
static int golden_fail;
