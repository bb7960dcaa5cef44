/* The `shoal` command: finds the subcommand in a table and hands it the rest
 * of the command line. The small helpers every subcommand shares (error
 * format, integer parsing, a monotonic clock) live here too
 * so that the subcommands agree on them; see cli/cli.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shoal/shoal.h"

#include "cli/cli.h"
#include "cli/cli_options.h"

/* The subcommands of cli/, in the order `shoal --help` lists them (the
 * registered ones, cli_table_command, come after "plot"). One line each. */
static const cli_command_t own_first[] = {
    {"run", "load a scenario, step it and report throughput and per-system costs", cmd_run},
    {"ensemble",
     "a scenario over seeds and parameter values on worker processes or MPI ranks: rows and a summary",
     cmd_ensemble},
    {"view", "make a recording (run --record) one HTML page that plays it in a browser", cmd_view},
    {"export", "a recording's trajectories as CSV or as a JuPedSim/PedPy SQLite database", cmd_export},
#if SHOAL_WITH_PLOT
    {"plot", "PNG/SVG pictures: run traces, dseek plans, path following, trim fans, search trees, scaling",
     cmd_plot},
#else
    {"plot", "not in this build (no cairo): 'shoal plot' says how to get it", cmd_plot},
#endif
};
static const cli_command_t own_last[] = {
    {"experiment",
     "the papers' experiments: pathfollow (Table I, soak), planner (Figures 6 and 7, battle), avoid",
     cmd_experiment},
    {"validate", "the crowd model against pedestrian data (crowd) and the RiMEA tests (rimea)", cmd_validate},
    {"step-table", "the step table: each system's stage, module, and the columns it reads and writes",
     cmd_step_table},
    {"soak", "a long mixed run that checks every invariant every step (reliability)", cmd_soak},
};

#define OWN_FIRST ((int)(sizeof(own_first) / sizeof(own_first[0])))
#define OWN_LAST ((int)(sizeof(own_last) / sizeof(own_last[0])))
enum { COMMANDS_MAX = 64 };

static const cli_command_t* commands[COMMANDS_MAX];
static int command_count;

/* The whole table: cli/'s first, the registered ones, cli/'s last. */
static void gather_commands(void)
{
    command_count = 0;
    for (int i = 0; i < OWN_FIRST; ++i) commands[command_count++] = &own_first[i];
    for (int i = 0; cli_table_command[i] && command_count < COMMANDS_MAX - OWN_LAST; ++i)
        commands[command_count++] = cli_table_command[i];
    for (int i = 0; i < OWN_LAST; ++i) commands[command_count++] = &own_last[i];
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define CLI_VERSION STR(SHOAL_VERSION_MAJOR) "." STR(SHOAL_VERSION_MINOR) "." STR(SHOAL_VERSION_PATCH)

void cli_error(const char* format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("shoal: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

int cli_usage_error(const char* command, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "shoal: %s: ", command);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nTry 'shoal %s --help'.\n", command);
    va_end(args);
    return CLI_EXIT_USAGE;
}

int cli_parse_int(const char* text, int64_t min, int64_t max, int64_t* out)
{
    /* strtoll alone would accept leading blanks, a '+' and an empty string;
     * a command line means what it literally says, so insist on digits. */
    const char* digits = (text[0] == '-') ? text + 1 : text;
    if (digits[0] < '0' || digits[0] > '9') {
        return 0;
    }
    errno = 0;
    char* end = NULL;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < min || value > max) {
        return 0;
    }
    *out = (int64_t)value;
    return 1;
}

#if !SHOAL_WITH_PLOT
int cli_no_plot(const char* command)
{
    cli_error("%s: this build of shoal has no plot support (it was configured without cairo). "
              "To get it, install cairo's development files (apt-get install libcairo2-dev) and "
              "configure again with -DSHOAL_WITH_PLOT=ON, e.g. 'cmake --preset release "
              "-DSHOAL_WITH_PLOT=ON'.",
              command);
    return CLI_EXIT_USAGE;
}

/* `shoal plot` in a build without cairo: every kind, and --help, says so. */
int cmd_plot(int argc, char** argv)
{
    (void)argc;
    (void)argv;
    return cli_no_plot("plot");
}
#endif

double cli_now_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void print_help(FILE* out)
{
    fprintf(out, "Usage: shoal <command> [options]\n"
                 "\n"
                 "shoal simulates crowds and fleets of autonomous agents.\n"
                 "\n"
                 "Commands:\n");
    for (int i = 0; i < command_count; ++i) {
        fprintf(out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
    }
    fprintf(out, "\n"
                 "Options:\n"
                 "  -h, --help     show this help (also: shoal help [command])\n"
                 "  --version      show the version of the command and of the library\n"
                 "\n"
                 "Run 'shoal <command> --help' for the options of a command.\n"
                 "Exit codes: 0 success, 1 failure (scenario, I/O, simulation), 2 bad usage.\n");
}

/* "; did you mean 'run'?" when `name` is a likely typo of a command, else "". */
static void command_hint(const char* name, char* out, size_t size)
{
    const char* names[COMMANDS_MAX];
    for (int i = 0; i < command_count; ++i) names[i] = commands[i]->name;
    const char* close = cli_closest(name, names, command_count);
    snprintf(out, size, "%s%s%s", close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
}

static const cli_command_t* find_command(const char* name)
{
    for (int i = 0; i < command_count; ++i) {
        if (strcmp(commands[i]->name, name) == 0) {
            return commands[i];
        }
    }
    return NULL;
}

int main(int argc, char** argv)
{
    gather_commands();
    if (argc < 2) {
        /* No command is a usage mistake: help goes to stderr so a script
         * that forgot the command sees it fail rather than print help. */
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char* name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        /* The library may be a shared object newer than this binary. */
        printf("shoal %s (library %s)\n", CLI_VERSION, shoal_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return CLI_EXIT_OK;
        }
        const cli_command_t* command = find_command(argv[2]);
        if (command == NULL) {
            char hint[80];
            command_hint(argv[2], hint, sizeof hint);
            cli_error("unknown command '%s' (see 'shoal --help')%s", argv[2], hint);
            return CLI_EXIT_USAGE;
        }
        char help_option[] = "--help";
        char* help_argv[] = {argv[2], help_option, NULL};
        return command->run(2, help_argv);
    }
    const cli_command_t* command = find_command(name);
    if (command == NULL) {
        if (name[0] == '-') {
            cli_error("unknown option '%s' (see 'shoal --help')", name);
        } else {
            char hint[80];
            command_hint(name, hint, sizeof hint);
            cli_error("unknown command '%s' (see 'shoal --help')%s", name, hint);
        }
        return CLI_EXIT_USAGE;
    }
    return command->run(argc - 1, argv + 1);
}
