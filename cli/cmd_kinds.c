/* The commands with kinds: `shoal experiment KIND` and `shoal validate
 * SUITE` here, `shoal bench KIND` in benchmark/. Their kinds register
 * themselves (cmake/shoal_cli.cmake); this finds the one named and runs it. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_options.h"

enum { KINDS_MAX = 32 };

void cli_print_kinds(FILE* out, const cli_command_t* const* kinds, int width)
{
    for (int i = 0; kinds[i]; ++i) {
        fprintf(out, "  %-*s ", width, kinds[i]->name);
        for (const char* c = kinds[i]->summary; *c; ++c) {
            fputc(*c, out);
            if (*c == '\n') fprintf(out, "  %-*s ", width, "");
        }
        fputc('\n', out);
    }
}

void cli_kind_list(const char* const* names, int count, char* out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count && used < size; ++i) {
        const char* sep = i == 0 ? "" : (i == count - 1 ? " or " : ", ");
        int n = snprintf(out + used, size - used, "%s%s", sep, names[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

int cli_unknown_kind(const char* command, const char* noun, const char* given, const char* const* names,
                     int count)
{
    char list[512];
    cli_kind_list(names, count, list, sizeof list);
    const char* close = cli_closest(given, names, count);
    return cli_usage_error(command, "unknown %s '%s' (expected %s)%s%s%s", noun, given, list,
                           close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
}

int cli_run_kind(const char* command, const char* noun, const cli_command_t* const* kinds, int argc,
                 char** argv, void (*help)(FILE* out))
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help(stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    const char* names[KINDS_MAX];
    int count = 0;
    for (int i = 0; kinds[i]; ++i) {
        if (!strcmp(kinds[i]->name, argv[1])) return kinds[i]->run(argc - 1, argv + 1);
        if (count < KINDS_MAX) names[count++] = kinds[i]->name;
    }
    return cli_unknown_kind(command, noun, argv[1], names, count);
}

static void experiment_help(FILE* out)
{
    fprintf(out, "Usage: shoal experiment KIND [options]\n\n"
                 "Run one of the papers' experiments and report what it measures.\n\n"
                 "Kinds ('shoal experiment KIND --help' lists a kind's own options):\n");
    cli_print_kinds(out, cli_table_experiment, 12);
    fputc('\n', out);
    fputs(cli_exit_codes_help, out);
}

int cmd_experiment(int argc, char** argv)
{
    return cli_run_kind("experiment", "experiment", cli_table_experiment, argc, argv, experiment_help);
}

static void validate_help(FILE* out)
{
    fprintf(out, "Usage: shoal validate SUITE [options]\n\n"
                 "Check the crowd model against measured pedestrians and published tests.\n\n"
                 "Suites ('shoal validate SUITE --help' lists a suite's own options):\n");
    cli_print_kinds(out, cli_table_validate, 8);
    fputc('\n', out);
    fputs(cli_exit_codes_help, out);
}

int cmd_validate(int argc, char** argv)
{
    return cli_run_kind("validate", "suite", cli_table_validate, argc, argv, validate_help);
}
