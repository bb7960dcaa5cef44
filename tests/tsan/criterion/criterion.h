/* The subset of Criterion's API that shoal's tests use, for the ThreadSanitizer
 * build only (tests/tsan/runner.c, docs/dev/fuzzing.md).
 *
 * Why: Criterion cannot start under TSan. Its sandbox (BoxFort) maps an
 * "inheritable arena" at an address that TSan's shadow memory already
 * holds, and every run aborts with "Could not initialize inheritable arena"
 * (https://github.com/Snaipe/Criterion/issues/274, open). The tsan preset
 * compiles the same tests/test_*.c against this header instead, so the
 * whole suite runs under TSan unchanged. Semantics follow Criterion's: a
 * failed cr_assert* ends the test, a failed cr_expect* marks it failed and
 * goes on; the message is optional and printf-like. Each test runs in its
 * own forked process, as with Criterion. */
#ifndef SHOAL_TSAN_CRITERION_SHIM_H
#define SHOAL_TSAN_CRITERION_SHIM_H

/* Criterion's header brings these; tests rely on them. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options of Test() and TestSuite(): the ones shoal's tests use. init and
 * fini run in the test's process before and after it (a suite's around each
 * of its tests, as in Criterion); timeout is accepted and ignored, the
 * runner has one timeout for every test. */
typedef struct shim_options_t {
    int unused_; /* lets the option list after it be empty */
    double timeout;
    void (*init)(void);
    void (*fini)(void);
} shim_options_t;

typedef struct shim_test_t {
    const char* suite;
    const char* name;
    void (*fn)(void);
    const shim_options_t* options;
    struct shim_test_t* next;
} shim_test_t;

typedef struct shim_suite_t {
    const char* name;
    const shim_options_t* options;
    struct shim_suite_t* next;
} shim_suite_t;

void shim_register(shim_test_t* test);
void shim_register_suite(shim_suite_t* suite);
/* Reports a failure at file:line; fatal ends the test (exit 1). The
 * message format may be empty. */
void shim_fail(const char* file, int line, int fatal, const char* expr, const char* format, ...)
    __attribute__((format(printf, 5, 6)));
void shim_log(const char* format, ...) __attribute__((format(printf, 1, 2)));

#define Test(suite, name, ...)                                                                               \
    static void shim_fn_##suite##_##name(void);                                                              \
    static const shim_options_t shim_opt_##suite##_##name = {.unused_ = 0, __VA_ARGS__};                     \
    static shim_test_t shim_test_##suite##_##name = {#suite, #name, shim_fn_##suite##_##name,                \
                                                     &shim_opt_##suite##_##name, NULL};                      \
    __attribute__((constructor)) static void shim_reg_##suite##_##name(void)                                 \
    {                                                                                                        \
        shim_register(&shim_test_##suite##_##name);                                                          \
    }                                                                                                        \
    static void shim_fn_##suite##_##name(void)

#define TestSuite(suite, ...)                                                                                \
    static const shim_options_t shim_suite_opt_##suite = {.unused_ = 0, __VA_ARGS__};                        \
    static shim_suite_t shim_suite_##suite = {#suite, &shim_suite_opt_##suite, NULL};                        \
    __attribute__((constructor)) static void shim_suite_reg_##suite(void)                                    \
    {                                                                                                        \
        shim_register_suite(&shim_suite_##suite);                                                            \
    }                                                                                                        \
    extern int shim_suite_declared_##suite

/* "" before the optional message turns "no message" into an empty format. */
#define SHIM_CHECK(fatal, cond, expr, ...)                                                                   \
    do {                                                                                                     \
        if (!(cond)) shim_fail(__FILE__, __LINE__, fatal, expr, "" __VA_ARGS__);                             \
    } while (0)

#define cr_assert(c, ...) SHIM_CHECK(1, (c), #c, __VA_ARGS__)
#define cr_expect(c, ...) SHIM_CHECK(0, (c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) SHIM_CHECK(1, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_expect_not(c, ...) SHIM_CHECK(0, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_fail(...) shim_fail(__FILE__, __LINE__, 1, "cr_assert_fail", "" __VA_ARGS__)
#define cr_expect_fail(...) shim_fail(__FILE__, __LINE__, 0, "cr_expect_fail", "" __VA_ARGS__)

#define SHIM_CMP(fatal, a, op, b, ...) SHIM_CHECK(fatal, (a)op(b), #a " " #op " " #b, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) SHIM_CMP(1, a, ==, b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) SHIM_CMP(0, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) SHIM_CMP(1, a, !=, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) SHIM_CMP(0, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) SHIM_CMP(1, a, <, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) SHIM_CMP(0, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) SHIM_CMP(1, a, <=, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) SHIM_CMP(0, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) SHIM_CMP(1, a, >, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) SHIM_CMP(0, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) SHIM_CMP(1, a, >=, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) SHIM_CMP(0, a, >=, b, __VA_ARGS__)

#define cr_assert_null(p, ...) SHIM_CHECK(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_null(p, ...) SHIM_CHECK(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) SHIM_CHECK(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) SHIM_CHECK(0, (p) != NULL, #p " != NULL", __VA_ARGS__)

#define cr_assert_float_eq(a, b, eps, ...)                                                                   \
    SHIM_CHECK(1, fabs((double)(a) - (double)(b)) <= (double)(eps), #a " ~= " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...)                                                                   \
    SHIM_CHECK(0, fabs((double)(a) - (double)(b)) <= (double)(eps), #a " ~= " #b, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, size, ...)                                                                    \
    SHIM_CHECK(1, memcmp((a), (b), (size)) == 0, #a " == " #b " (bytes)", __VA_ARGS__)
#define cr_expect_arr_eq(a, b, size, ...)                                                                    \
    SHIM_CHECK(0, memcmp((a), (b), (size)) == 0, #a " == " #b " (bytes)", __VA_ARGS__)

#define cr_assert_str_eq(a, b, ...) SHIM_CHECK(1, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) SHIM_CHECK(0, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) SHIM_CHECK(1, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) SHIM_CHECK(0, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_assert_str_empty(s, ...) SHIM_CHECK(1, (s)[0] == '\0', #s " is empty", __VA_ARGS__)
#define cr_expect_str_empty(s, ...) SHIM_CHECK(0, (s)[0] == '\0', #s " is empty", __VA_ARGS__)

#define cr_log_info(...) shim_log(__VA_ARGS__)
#define cr_log_warn(...) shim_log(__VA_ARGS__)

#endif
