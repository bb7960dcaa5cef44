/* Fuzz target: course files, the path files of `shoal pathfollow --path`
 * (course_parse in experiments/pathfollow/course_file.c), then, for a course that parses,
 * the library calls the command makes with it: a world with its terrain
 * and obstacles (pf_course_world), the path, one vehicle following it, and
 * a few steps. Courses parse up to 4096 x 4096 terrains, but an input is at
 * most 64 KB, so every world here is small. */
#include <math.h>

#include "shoal/shoal.h"
#include "tests/fuzz/fuzz.h"
#include "experiments/pathfollow/courses.h"
#include "experiments/pathfollow/pathfollow_runs.h"

enum { FUZZ_STEPS = 8 };

static void drive(const course_t* c)
{
    char err[512] = "";
    shoal_world_t* w = pf_course_world(c, err, sizeof err);
    if (!w) {
        FUZZ_CHECK(err[0] != '\0', "pf_course_world failed without a message");
        return;
    }
    int32_t path = -1;
    if (shoal_world_add_path(w, c->xyz, c->count, c->half_width, &path) != SHOAL_OK) {
        FUZZ_CHECK(shoal_world_last_error(w)[0] != '\0', "add_path failed without a message");
        FUZZ_CHECK(shoal_world_path_count(w) == 0, "a failed add_path added a path");
        shoal_world_destroy(w);
        return;
    }
    shoal_agent_def_t d = shoal_agent_default_def();
    memcpy(d.position, c->xyz, 3 * sizeof(float));
    d.heading = atan2f(c->xyz[4] - c->xyz[1], c->xyz[3] - c->xyz[0]);
    d.ground.enabled = 1;
    FUZZ_CHECK(shoal_ground_vehicle_preset("car", &d.ground.vehicle, NULL) == SHOAL_OK, "preset");
    d.ground.follow = shoal_path_follow_default();
    d.ground.follow.path = path;
    shoal_agent_t id;
    if (shoal_agent_add(w, &d, &id) != SHOAL_OK) {
        FUZZ_CHECK(shoal_world_last_error(w)[0] != '\0', "agent_add failed without a message");
        shoal_world_destroy(w);
        return;
    }
    for (int i = 0; i < FUZZ_STEPS; ++i)
        FUZZ_CHECK(shoal_world_step(w, PF_RUN_DT) == SHOAL_OK, "step %d: %s", i, shoal_world_last_error(w));
    shoal_agent_state_t s;
    FUZZ_CHECK(shoal_agent_get_state(w, id, &s) == SHOAL_OK, "get_state");
    for (int k = 0; k < 3; ++k)
        FUZZ_CHECK(isfinite(s.position[k]) && isfinite(s.velocity[k]),
                   "non-finite vehicle state after %d steps", FUZZ_STEPS);
    shoal_world_destroy(w);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    course_t c;
    char err[512] = "";
    if (course_parse((const char*)data, size, "fuzz", &c, err, sizeof err) != 0) {
        FUZZ_CHECK(err[0] != '\0', "a failed parse gave no message");
        FUZZ_CHECK(c.heights == NULL && c.obstacles == NULL && c.xyz == NULL, "a failed parse kept memory");
        return 0;
    }
    FUZZ_CHECK(c.count >= 0 && (c.count == 0 || c.xyz != NULL), "count %d", (int)c.count);
    FUZZ_CHECK(isfinite(c.half_width), "half_width");
    drive(&c);
    course_free(&c);
    return 0;
}
