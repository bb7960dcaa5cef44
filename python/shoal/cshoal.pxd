# Declarations of the C API that the binding uses (shoal/shoal.h and the
# file-format headers). Only the fields the binding touches are listed;
# the C compiler sees the real structs.
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t, int64_t

cdef extern from "shoal/shoal.h" nogil:
    ctypedef struct shoal_world_t:
        pass
    ctypedef enum shoal_status_t:
        SHOAL_OK
        SHOAL_ERR_INVALID_ARGUMENT
        SHOAL_ERR_STALE_HANDLE
        SHOAL_ERR_OUT_OF_MEMORY
        SHOAL_ERR_PARSE
        SHOAL_ERR_IO
        SHOAL_ERR_CAPACITY
        SHOAL_ERR_BUSY
        SHOAL_ERR_NOT_FOUND
    ctypedef struct shoal_error_t:
        shoal_status_t status
        char message[512]
    ctypedef struct shoal_agent_t:
        uint32_t index1
        uint16_t world0
        uint16_t generation
    ctypedef void* shoal_alloc_fn(size_t, size_t, void*)
    ctypedef void shoal_free_fn(void*, size_t, void*)
    ctypedef struct shoal_world_def_t:
        int32_t dimensions
        uint64_t seed
        int32_t thread_count
        int32_t initial_capacity
        int32_t wrap
        float bounds_min[3]
        float bounds_max[3]
        float cell_size
        int32_t reorder_interval
        shoal_alloc_fn* alloc
        shoal_free_fn* free
        void* alloc_user_ctx
    shoal_world_def_t shoal_world_default_def()

    ctypedef struct shoal_vehicle_t:
        float mass, inertia, max_force, max_torque, max_speed, max_turn_rate, radius
    ctypedef struct shoal_control_t:
        float speed_gain, heading_gain, turn_damping
    ctypedef struct shoal_neighbors_t:
        float radius, fov
        int32_t max_neighbors
        float separation_gain, alignment_gain, cohesion_gain
    ctypedef struct shoal_wander_t:
        float cruise_speed, strength, noise
    ctypedef struct shoal_avoid_t:
        float lookahead_time, gain
        int32_t tangential
    ctypedef struct shoal_waypoint_t:
        float position[3]
        float direction[3]
        float speed
    ctypedef struct shoal_dseek_t:
        shoal_waypoint_t waypoint
        int32_t route
        float r_min, reach_radius
    ctypedef struct shoal_crowd_t:
        int32_t enabled
        float neighbor_distance
        int32_t max_neighbors
        float time_horizon, time_horizon_walls, responsibility, preferred_speed, time_gap
        float side_preference
    ctypedef struct shoal_nav_t:
        int32_t goal
        float arrive_distance
        int32_t journey
        float start_delay
    ctypedef struct shoal_navmesh_t:
        float goal[2]
        float arrive_distance
    ctypedef struct shoal_agent_def_t:
        float position[3]
        float velocity[3]
        float heading, pitch
        shoal_vehicle_t vehicle
        shoal_control_t control
        float weights[16]
        float arrive_gain, depart_gain
        float target[3]
        float threat[3]
        shoal_neighbors_t neighbors
        shoal_wander_t wander
        shoal_avoid_t avoid
        shoal_dseek_t dseek
        shoal_crowd_t crowd
        shoal_nav_t nav
        shoal_navmesh_t navmesh
        int32_t contacts
        uint32_t group
        uint64_t user_value
    shoal_agent_def_t shoal_agent_default_def()
    shoal_status_t shoal_agent_get_def(const shoal_world_t* w, shoal_agent_t id, shoal_agent_def_t* out)
    ctypedef enum shoal_behavior_t:
        SHOAL_BEHAVIOR_NAVIGATE
        SHOAL_BEHAVIOR_COUNT_
    const char* shoal_behavior_name(int behavior)
    shoal_status_t shoal_crowd_preset(const char* name, shoal_crowd_t* crowd, shoal_vehicle_t* vehicle,
                                      shoal_error_t* err)

    ctypedef struct shoal_agent_arrays_t:
        const float* positions
        const float* velocities
        const float* headings
        const float* targets
        const uint32_t* groups
        const uint64_t* user_values
        const float* pitches

    ctypedef enum shoal_column_type_t:
        SHOAL_COLUMN_F32
        SHOAL_COLUMN_I32
        SHOAL_COLUMN_U32
        SHOAL_COLUMN_U64
    ctypedef struct shoal_column_t:
        void* data
        int32_t count
        int32_t width
        shoal_column_type_t type
        int32_t writable
        uint64_t version
    ctypedef struct shoal_component_def_t:
        const char* name
        shoal_column_type_t type
        int32_t width
        const void* default_value

    ctypedef struct shoal_system_stats_t:
        const char* name
        int stage
        int32_t enabled
        uint64_t calls
        uint64_t ns_total
        uint64_t agents
    ctypedef struct shoal_crowd_stats_t:
        int32_t agents, arrived
        float closest_pair
        int32_t overlapping, relaxed_last_step, contact_iterations
        float wall_penetration
        int32_t in_walls

    const char* shoal_version()
    const char* shoal_status_string(shoal_status_t status)
    const char* shoal_stage_name(int stage)
    void* shoal_default_alloc(size_t size, size_t align, void* ctx)
    void shoal_default_free(void* ptr, size_t size, void* ctx)

    shoal_status_t shoal_world_create(const shoal_world_def_t* d, shoal_world_t** out, shoal_error_t* err)
    void shoal_world_destroy(shoal_world_t* w)
    shoal_status_t shoal_world_step(shoal_world_t* w, float dt)
    const char* shoal_world_last_error(const shoal_world_t* w)
    int32_t shoal_world_dimensions(const shoal_world_t* w)
    int32_t shoal_world_agent_count(const shoal_world_t* w)
    int32_t shoal_world_thread_count(const shoal_world_t* w)
    uint64_t shoal_world_step_count(const shoal_world_t* w)
    double shoal_world_time(const shoal_world_t* w)
    uint64_t shoal_world_state_hash(const shoal_world_t* w)
    uint64_t shoal_world_structure_version(const shoal_world_t* w)

    shoal_status_t shoal_agents_add(shoal_world_t* w, const shoal_agent_def_t* d,
                                    const shoal_agent_arrays_t* a, int32_t count, shoal_agent_t* out)
    shoal_status_t shoal_agents_remove(shoal_world_t* w, const shoal_agent_t* ids, int32_t count)
    shoal_status_t shoal_agents_set_targets(shoal_world_t* w, const shoal_agent_t* ids, int32_t count,
                                            const float* targets)
    shoal_status_t shoal_agents_teleport(shoal_world_t* w, const shoal_agent_t* ids, int32_t count,
                                         const float* positions, const float* velocities)
    int shoal_agent_is_valid(const shoal_world_t* w, shoal_agent_t id)
    int32_t shoal_agent_row(const shoal_world_t* w, shoal_agent_t id)
    shoal_status_t shoal_world_row_handles(const shoal_world_t* w, int32_t first, int32_t count,
                                           shoal_agent_t* out)
    ctypedef struct shoal_agent_batch_t:
        shoal_agent_t* ids
        float* positions
        float* velocities
        float* headings
        float* orientations
        uint64_t* user_values
        uint32_t* groups
        uint64_t* global_ids
    shoal_status_t shoal_world_read_agents(const shoal_world_t* w, const shoal_agent_batch_t* batch,
                                           int32_t capacity, int32_t* out_count)
    shoal_status_t shoal_world_column(shoal_world_t* w, const char* name, shoal_column_t* out)
    shoal_status_t shoal_world_add_component(shoal_world_t* w, const shoal_component_def_t* d)

    shoal_status_t shoal_world_add_obstacle(shoal_world_t* w, const float* center, float radius, int32_t* out)
    shoal_status_t shoal_world_add_moving_obstacle(shoal_world_t* w, const float* center,
                                                   const float* velocity, float radius, int32_t* out)
    int32_t shoal_world_obstacle_count(const shoal_world_t* w)
    shoal_status_t shoal_world_add_wall(shoal_world_t* w, const float* points, int32_t count,
                                        int32_t closed, int32_t* out)
    int32_t shoal_world_wall_count(const shoal_world_t* w)

    int32_t shoal_world_system_count(const shoal_world_t* w)
    shoal_status_t shoal_world_system_stats(const shoal_world_t* w, int32_t i, shoal_system_stats_t* out)
    shoal_status_t shoal_world_set_system_enabled(shoal_world_t* w, const char* name, int enabled)
    void shoal_world_reset_stats(shoal_world_t* w)
    shoal_status_t shoal_world_crowd_stats(const shoal_world_t* w, shoal_crowd_stats_t* out)

cdef extern from "shoal/nav.h" nogil:
    ctypedef struct shoal_nav_params_t:
        float cell, clearance, wall_distance, wall_speed
        float bounds[4]
        float margin
        double max_bytes
        float density_weight
        int32_t density_interval
    shoal_nav_params_t shoal_nav_params_default()
    shoal_status_t shoal_world_set_nav(shoal_world_t* w, const shoal_nav_params_t* params)
    shoal_status_t shoal_world_get_nav(const shoal_world_t* w, shoal_nav_params_t* out)

    ctypedef enum shoal_nav_goal_kind_t:
        SHOAL_NAV_POINT
        SHOAL_NAV_LINE
        SHOAL_NAV_AREA
    enum:
        SHOAL_NAV_GOAL_POINTS
        SHOAL_MAX_NAV_GOALS
    ctypedef struct shoal_nav_goal_t:
        int32_t kind
        int32_t count
        int32_t exit
        float points[16][2]
    shoal_status_t shoal_world_add_nav_goal(shoal_world_t* w, const shoal_nav_goal_t* goal, int32_t* out_id)
    shoal_status_t shoal_world_remove_nav_goal(shoal_world_t* w, int32_t id)
    int32_t shoal_world_nav_goal_count(const shoal_world_t* w)

    enum:
        SHOAL_NAV_ZONE_POINTS
        SHOAL_MAX_NAV_ZONES
    ctypedef struct shoal_nav_zone_t:
        int32_t count
        float speed_factor
        float points[16][2]
    shoal_nav_zone_t shoal_nav_zone_default()
    shoal_status_t shoal_world_add_nav_zone(shoal_world_t* w, const shoal_nav_zone_t* zone, int32_t* out_id)
    shoal_status_t shoal_world_remove_nav_zone(shoal_world_t* w, int32_t id)
    int32_t shoal_world_nav_zone_count(const shoal_world_t* w)

    shoal_nav_t shoal_nav_default()
    shoal_status_t shoal_agent_set_nav(shoal_world_t* w, shoal_agent_t id, const shoal_nav_t* nav)

    enum:
        SHOAL_JOURNEY_STAGES
        SHOAL_JOURNEY_NEXT
        SHOAL_MAX_JOURNEYS
    ctypedef enum shoal_transition_kind_t:
        SHOAL_TRANSITION_END
        SHOAL_TRANSITION_FIXED
        SHOAL_TRANSITION_ROUND_ROBIN
        SHOAL_TRANSITION_QUICKEST
    ctypedef struct shoal_journey_stage_t:
        int32_t goal
        float wait
        int32_t transition
        int32_t next_count
        int32_t next[4]
        int32_t next_weight[4]
    ctypedef struct shoal_journey_t:
        int32_t count
        shoal_journey_stage_t stages[16]
    shoal_status_t shoal_world_add_journey(shoal_world_t* w, const shoal_journey_t* journey, int32_t* out_id)
    int32_t shoal_world_journey_count(const shoal_world_t* w)
    ctypedef struct shoal_nav_agent_t:
        int32_t goal, stage, status
        float remaining, waited, delay
    shoal_status_t shoal_agent_get_nav_state(const shoal_world_t* w, shoal_agent_t id, shoal_nav_agent_t* out)

    ctypedef struct shoal_nav_grid_info_t:
        float origin[2]
        float cell
        int32_t nx, ny
        int64_t blocked
        double bytes
    shoal_status_t shoal_world_nav_update(shoal_world_t* w)
    shoal_status_t shoal_world_nav_grid(const shoal_world_t* w, shoal_nav_grid_info_t* out)
    shoal_status_t shoal_world_nav_field(const shoal_world_t* w, int32_t goal, float* out, int64_t capacity,
                                         int64_t* out_count)

    ctypedef struct shoal_nav_stats_t:
        int32_t agents, arrived, no_way, off_grid, in_walls
        int64_t exited
        double mean_remaining
    shoal_status_t shoal_world_nav_stats(const shoal_world_t* w, int32_t goal, shoal_nav_stats_t* out)

cdef extern from "shoal/measure.h" nogil:
    enum:
        SHOAL_MEASURE_NAME_MAX
        SHOAL_MEASURE_AREA_POINTS
    ctypedef struct shoal_measure_line_t:
        const char* name
        float from_ "from"[2]
        float to[2]
        int64_t group
        float window
    shoal_measure_line_t shoal_measure_line_default()
    ctypedef struct shoal_measure_area_t:
        const char* name
        int32_t count
        float points[16][2]
        int32_t every
        int64_t group
        float cell_radius
    shoal_measure_area_t shoal_measure_area_default()
    shoal_status_t shoal_world_add_measure_line(shoal_world_t* w, const shoal_measure_line_t* line,
                                                int32_t* out_id)
    shoal_status_t shoal_world_add_measure_area(shoal_world_t* w, const shoal_measure_area_t* area,
                                                int32_t* out_id)
    int32_t shoal_world_measure_line_count(const shoal_world_t* w)
    int32_t shoal_world_measure_area_count(const shoal_world_t* w)
    ctypedef struct shoal_measure_crossing_t:
        double time
    ctypedef struct shoal_measure_line_stats_t:
        char name[32]
        float from_ "from"[2]
        float to[2]
        int64_t group
        float window
        int64_t positive, negative
        double first_time, last_time, start_time, duration, mean_flow
    shoal_status_t shoal_world_measure_line_stats(const shoal_world_t* w, int32_t id,
                                                  shoal_measure_line_stats_t* out)
    int64_t shoal_world_measure_line_crossings(const shoal_world_t* w, int32_t id,
                                               shoal_measure_crossing_t* out, int64_t capacity)
    int64_t shoal_world_measure_line_flow(const shoal_world_t* w, int32_t id, double* out, int64_t capacity)
    ctypedef struct shoal_measure_sample_t:
        double time
    ctypedef struct shoal_measure_area_stats_t:
        char name[32]
        int32_t count, every
        int64_t group
        float cell_radius
        double area
        int64_t samples, total_samples
        double mean_count, mean_density, mean_voronoi_density, mean_speed, mean_voronoi_speed
    shoal_status_t shoal_world_measure_area_stats(const shoal_world_t* w, int32_t id, double t0, double t1,
                                                  shoal_measure_area_stats_t* out)
    int64_t shoal_world_measure_area_samples(const shoal_world_t* w, int32_t id, shoal_measure_sample_t* out,
                                             int64_t capacity)

cdef extern from "shoal/navmesh.h" nogil:
    int32_t shoal_navmesh_available()
    ctypedef struct shoal_navmesh_params_t:
        float cell, agent_radius
        float bounds[4]
        float margin
        int32_t replans_per_step, replan_interval
        float off_path_distance
    shoal_navmesh_params_t shoal_navmesh_params_default()
    shoal_status_t shoal_world_set_navmesh(shoal_world_t* w, const shoal_navmesh_params_t* params)
    shoal_status_t shoal_world_get_navmesh(const shoal_world_t* w, shoal_navmesh_params_t* out)
    shoal_status_t shoal_world_navmesh_update(shoal_world_t* w)
    shoal_status_t shoal_world_navmesh_path(shoal_world_t* w, const float* frm, const float* to, float* out_xy,
                                            int32_t capacity, int32_t* out_count, int32_t* out_partial)
    shoal_navmesh_t shoal_navmesh_default()
    ctypedef struct shoal_navmesh_stats_t:
        int32_t agents, arrived, no_way, off_mesh, waiting, replans, polygons, pending
    shoal_status_t shoal_world_navmesh_stats(const shoal_world_t* w, shoal_navmesh_stats_t* out)

cdef extern from "shoal/scenario.h" nogil:
    ctypedef struct shoal_scenario_t:
        pass
    shoal_status_t shoal_scenario_load_file(const char* path, shoal_scenario_t** out, shoal_error_t* err)
    shoal_status_t shoal_scenario_load_string(const char* json, size_t length, const char* source_name,
                                              shoal_scenario_t** out, shoal_error_t* err)
    void shoal_scenario_destroy(shoal_scenario_t* s)
    const char* shoal_scenario_name(const shoal_scenario_t* s)
    int32_t shoal_scenario_steps(const shoal_scenario_t* s)
    float shoal_scenario_dt(const shoal_scenario_t* s)
    void shoal_scenario_set_seed(shoal_scenario_t* s, uint64_t seed)
    int32_t shoal_scenario_group_count(const shoal_scenario_t* s)
    const char* shoal_scenario_group_name(const shoal_scenario_t* s, int32_t i)
    shoal_world_def_t shoal_scenario_world_def(const shoal_scenario_t* s)
    shoal_status_t shoal_scenario_populate(const shoal_scenario_t* s, shoal_world_t* w)

cdef extern from "shoal/snapshot.h" nogil:
    shoal_status_t shoal_world_save_snapshot(const shoal_world_t* w, const char* path)
    shoal_status_t shoal_world_save_snapshot_memory(const shoal_world_t* w, void* buf, size_t cap,
                                                    size_t* out_size)
    shoal_status_t shoal_world_load_snapshot(const char* path, const shoal_world_def_t* d,
                                             shoal_world_t** out, shoal_error_t* err)
    shoal_status_t shoal_world_load_snapshot_memory(const void* data, size_t size,
                                                    const shoal_world_def_t* d,
                                                    shoal_world_t** out, shoal_error_t* err)

cdef extern from "shoal/recording.h" nogil:
    ctypedef struct shoal_recording_t:
        pass
    ctypedef struct shoal_recorder_t:
        pass
    ctypedef struct shoal_recording_header_t:
        int32_t dimensions
        float dt
        int32_t record_every
        uint64_t steps_hint
        int32_t wrap
        float bounds_min[3]
        float bounds_max[3]
        const char* units
        const char* scenario_name
        const char* group_names
        const char* scenario_text
    ctypedef struct shoal_recording_frame_t:
        uint64_t step
        double time
        int32_t count
        const uint32_t* ids
        const uint32_t* generations
        const uint32_t* groups
        const float* positions
        const float* headings
        const float* orientations
        const uint64_t* global_ids
    shoal_recording_header_t shoal_recording_default_header()
    shoal_status_t shoal_recording_open(const char* path, const shoal_recording_header_t* h,
                                        shoal_recorder_t** out, shoal_error_t* err)
    shoal_status_t shoal_recording_write_frame(shoal_recorder_t* r, const shoal_world_t* w,
                                               shoal_error_t* err)
    int64_t shoal_recording_frames_written(const shoal_recorder_t* r)
    shoal_status_t shoal_recording_close(shoal_recorder_t* r, shoal_error_t* err)
    shoal_status_t shoal_recording_load(const char* path, uint32_t flags, shoal_recording_t** out,
                                        shoal_error_t* err)
    void shoal_recording_destroy(shoal_recording_t* r)
    const shoal_recording_header_t* shoal_recording_header(const shoal_recording_t* r)
    int32_t shoal_recording_frame_count(const shoal_recording_t* r)
    int shoal_recording_is_complete(const shoal_recording_t* r)
    shoal_status_t shoal_recording_frame(const shoal_recording_t* r, int32_t i,
                                         shoal_recording_frame_t* out)

    enum:
        SHOAL_RECORDING_ALLOW_TRUNCATED
    ctypedef struct shoal_recording_reader_t:
        pass
    shoal_status_t shoal_recording_reader_open(const char* path, uint32_t flags,
                                               shoal_recording_reader_t** out, shoal_error_t* err)
    void shoal_recording_reader_close(shoal_recording_reader_t* reader)
    const shoal_recording_header_t* shoal_recording_reader_header(const shoal_recording_reader_t* reader)
    int32_t shoal_recording_reader_frame_count(const shoal_recording_reader_t* reader)
    int shoal_recording_reader_is_complete(const shoal_recording_reader_t* reader)
    int32_t shoal_recording_reader_version(const shoal_recording_reader_t* reader)
    ctypedef struct shoal_recording_obstacle_t:
        int32_t id
        float center[3]
        float radius
        float velocity[3]
    ctypedef struct shoal_recording_geometry_t:
        double time
        int32_t wall_count
        const float* walls
        int32_t obstacle_count
        const shoal_recording_obstacle_t* obstacles
    shoal_status_t shoal_recording_reader_geometry(const shoal_recording_reader_t* reader,
                                                   shoal_recording_geometry_t* out)
    const char* shoal_recording_reader_damage(const shoal_recording_reader_t* reader)
    shoal_status_t shoal_recording_reader_frame(shoal_recording_reader_t* reader, int32_t index,
                                                shoal_recording_frame_t* out_frame, shoal_error_t* err)
    ctypedef struct shoal_recording_nav_t:
        int32_t frame
        uint64_t step
        double time
        float origin[2]
        float cell
        int32_t nx, ny
        int32_t goal_count
        const int32_t* goals
        const uint8_t* blocked
        const float* fields
        const float* max_error
    int32_t shoal_recording_reader_nav_count(const shoal_recording_reader_t* reader)
    shoal_status_t shoal_recording_reader_nav(shoal_recording_reader_t* reader, int32_t index,
                                              shoal_recording_nav_t* out, shoal_error_t* err)
    shoal_status_t shoal_recording_open_version(const char* path, const shoal_recording_header_t* h,
                                                int32_t version, shoal_recorder_t** out, shoal_error_t* err)

cdef extern from "export.h" nogil:
    ctypedef enum export_format_t:
        EXPORT_UNKNOWN
        EXPORT_CSV
        EXPORT_SQLITE
    ctypedef struct export_summary_t:
        int64_t rows
        int32_t frames
        int32_t frames_skipped
        int32_t obstacles_cut
        int32_t obstacles_kept_out
    int export_sqlite_available()
    int export_check_target(export_format_t format, const char* path, int force, char* msg, int msg_size)
    int export_check_dimensions(export_format_t format, int dimensions, char* msg, int msg_size)
    int export_write(export_format_t format, shoal_recording_reader_t* recording, const char* path, int force,
                     export_summary_t* summary, char* msg, int msg_size)

cdef extern from "view_page.h" nogil:
    ctypedef struct view_thinning_t:
        int32_t every
        int32_t max_agents
    ctypedef struct view_page_t:
        const char* input
        const char* shown
        const char* note
        const char* warning
        int32_t version
    ctypedef struct view_page_plan_t:
        view_thinning_t thin
        int automatic
        uint64_t whole_bytes
        uint64_t bytes
        char shown[256]
        char note[256]
    void view_page_plan(shoal_recording_reader_t* recording, int32_t every, int32_t max_agents,
                        view_page_plan_t* out)
    int view_page_write(const char* path, const view_page_t* about, shoal_recording_reader_t* recording,
                        view_thinning_t thin, char* why, size_t why_size)

cdef extern from "pins.h" nogil:
    ctypedef struct pin_table_t:
        pass
    pin_table_t* pins_create()
    void pins_destroy(pin_table_t* t)
    void* pins_alloc(size_t size, size_t align, void* ctx)
    void pins_free(void* ptr, size_t size, void* ctx)
    void* pins_pin(pin_table_t* t, const void* p)
    void pins_unpin(pin_table_t* t, void* block)
    int64_t pins_kept(pin_table_t* t)
    int32_t pins_waiting(pin_table_t* t)
