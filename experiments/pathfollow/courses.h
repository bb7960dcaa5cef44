/* The path-following experiment's courses: a terrain (height field), static
 * obstacles (vertical cylinders) and one path with its corridor half-width,
 * built procedurally so that every run of the experiment sees the same
 * ground.
 *
 * Two sets that share no course: the ten test courses of the Table I
 * experiment, and the tuning courses the black-box tuner may look at.
 * Paths are sparse waypoint lists like a navigation mesh's output: they
 * ignore the vehicles' kinematics (corners are corners), which is what
 * makes vehicles get stuck.
 */
#ifndef SHOAL_CLI_COURSES_H
#define SHOAL_CLI_COURSES_H

#include <stddef.h>
#include <stdint.h>

typedef struct course_t {
    char name[32];
    char about[96];
    /* terrain: heights[j * nx + i] at (origin[0] + i cell, origin[1] + j cell) */
    int32_t nx, ny;
    float origin[2];
    float cell;
    float* heights;
    /* obstacles: x, y, radius */
    int32_t obstacle_count;
    float (*obstacles)[3];
    /* path: count waypoints, xyz (z on the ground) */
    int32_t count;
    float* xyz;
    float half_width;
} course_t;

enum { COURSE_TEST_COUNT = 10, COURSE_TUNING_COUNT = 7 };

/* Build test course `index` (tuning != 0: tuning course) into `out`.
 * Returns 0 on success, -1 when out of memory or index out of range. */
int course_make(int index, int tuning, course_t* out);
void course_free(course_t* c);
/* Build the test or tuning course called `name` into c. Returns 0, 1 when
 * no course has that name, -1 when out of memory. */
int course_find(const char* name, course_t* c);

/* Ground height of a course at (x, y) (bilinear, like the library). */
float course_height(const course_t* c, float x, float y);

/* A random route for the soak run on the "town" map: a random walk of
 * `legs` blocks on its street grid starting at street node (ix, iy); writes
 * up to max waypoints to xyz and returns the count. The walk never turns
 * back on itself, nor on the direction *dir (0..3: +x, +y, -x, -y; -1 for
 * none) it arrived by; *dir is set to the last leg's direction. rng is a
 * 64-bit state advanced here. */
int32_t town_route(const course_t* town, int32_t ix, int32_t iy, int legs, uint64_t* rng, float* xyz,
                   int32_t max, int32_t* end_ix, int32_t* end_iy, int32_t* dir);
/* The town: rolling hills, a grid of streets between blocks of obstacles. */
int town_make(course_t* out);
/* Street grid of the town: nodes at town_node_xy(i, j), i, j in [0, TOWN_N). */
enum { TOWN_N = 7 };
void town_node_xy(int32_t i, int32_t j, float* x, float* y);

/* Course files (experiments/pathfollow/course_file.c). Each returns 0, or -1 with a message
 * naming the file and the key in err. course_parse reads `length` bytes of
 * JSON at `text` (no NUL needed); `name` stands for the file in messages.
 * On failure *c holds nothing to free. */
int course_parse(const char* text, size_t length, const char* name, course_t* c, char* err, int err_size);
int course_load(const char* path, course_t* c, char* err, int err_size);
int course_save(const course_t* c, const char* path, char* err, int err_size);

#endif
