/* Hello, shoal: a crowd leaves a room by its door.
 *
 * An 8 m x 8 m room walled on four sides, with a 1.2 m door in its east
 * wall; 64 pedestrians on a lattice inside; an exit line 2 m beyond the
 * door. Each walks down the exit's navigation field (round the walls, to
 * the door), avoids the others, and leaves the world when it reaches the
 * line. Prints how many are left each 10 s; exit status 0 when all are out
 * within 120 s of simulated time.
 *
 * Build against an installed shoal: cc hello.c $(pkg-config --cflags --libs shoal) -lm */
#include <stdio.h>

#include <shoal/shoal.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        shoal_status_t status_ = (call);                                                                     \
        if (status_ != SHOAL_OK) {                                                                           \
            fprintf(stderr, "hello: %s: %s\n", #call, shoal_world_last_error(world));                        \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int main(void)
{
    shoal_world_t* world = NULL;
    shoal_world_def_t def = shoal_world_default_def(); /* 2D, unbounded, threads: automatic */
    shoal_error_t err;
    if (shoal_world_create(&def, &world, &err) != SHOAL_OK) {
        fprintf(stderr, "hello: %s\n", err.message);
        return 1;
    }

    /* The room: one wall from the door's top round to its bottom. */
    const float room[] = {8.0f, 0.6f, 8.0f, 4.0f, 0.0f, 4.0f, 0.0f, -4.0f, 8.0f, -4.0f, 8.0f, -0.6f};
    CHECK(shoal_world_add_wall(world, room, 6, 0, NULL));

    /* The exit: a line 2 m beyond the door; agents that reach it leave. */
    shoal_nav_goal_t exit_line = {.kind = SHOAL_NAV_LINE, .count = 2, .exit = 1};
    exit_line.points[0][0] = 10.0f;
    exit_line.points[0][1] = -3.0f;
    exit_line.points[1][0] = 10.0f;
    exit_line.points[1][1] = 3.0f;
    int32_t goal = -1;
    CHECK(shoal_world_add_nav_goal(world, &exit_line, &goal));

    /* 64 pedestrians 0.8 m apart, each walking down the exit's field. */
    shoal_agent_def_t walker = shoal_agent_default_def();
    CHECK(shoal_crowd_preset("pedestrian", &walker.crowd, &walker.vehicle, NULL));
    walker.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
    walker.nav.goal = goal;
    for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
            walker.position[0] = 1.0f + 0.8f * (float)i;
            walker.position[1] = -2.8f + 0.8f * (float)j;
            CHECK(shoal_agent_add(world, &walker, NULL));
        }
    }

    const float dt = 0.05f; /* s */
    int32_t left = shoal_world_agent_count(world);
    for (int step = 1; step <= 2400 && left > 0; ++step) {
        CHECK(shoal_world_step(world, dt));
        left = shoal_world_agent_count(world);
        if (step % 200 == 0 || left == 0) printf("t = %5.1f s: %2d in the room\n", step * dt, (int)left);
    }
    printf("state_hash %016llx\n", (unsigned long long)shoal_world_state_hash(world));
    shoal_world_destroy(world);
    return left == 0 ? 0 : 1;
}
