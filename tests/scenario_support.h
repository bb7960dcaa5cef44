/* What the scenario tests share: loading a scenario from a string (the
 * file name in messages is SCENARIO_TEST_FILE, defined before this header
 * is included, "test.json" by default), checking that a load fails with a
 * parse error naming what was expected, and a serial world for a loaded
 * scenario. */
#ifndef SHOAL_TESTS_SCENARIO_SUPPORT_H
#define SHOAL_TESTS_SCENARIO_SUPPORT_H

#include <criterion/criterion.h>
#include <string.h>

#include "shoal/scenario.h"
#include "shoal/shoal.h"

#ifndef SCENARIO_TEST_FILE
#define SCENARIO_TEST_FILE "test.json"
#endif

static inline shoal_scenario_t* load_text(const char* json)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    shoal_status_t st = shoal_scenario_load_string(json, strlen(json), SCENARIO_TEST_FILE, &s, &err);
    cr_assert_eq(st, SHOAL_OK, "status %d: %s\nin: %s", (int)st, err.message, json);
    return s;
}

/* The load fails with a parse error whose message holds `expected`, and
 * *out is NULL. */
static inline void expect_error(const char* json, const char* expected)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err;
    shoal_status_t st = shoal_scenario_load_string(json, strlen(json), SCENARIO_TEST_FILE, &s, &err);
    cr_expect_eq(st, SHOAL_ERR_PARSE, "status %d (%s)\nin: %s", (int)st, err.message, json);
    cr_expect_null(s, "*out is not NULL after a failure");
    cr_expect_not_null(strstr(err.message, expected), "message '%s' lacks '%s'", err.message, expected);
    if (s != (shoal_scenario_t*)&err) shoal_scenario_destroy(s);
}

/* A one-thread serial world from the scenario's world settings. */
static inline shoal_world_t* serial_world(const shoal_scenario_t* s)
{
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

#endif
