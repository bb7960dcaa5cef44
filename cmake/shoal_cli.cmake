# How the `shoal` command is put together from its directories.
#
# shoal_cli_common: what every part of the command compiles with (the
# library's internal headers, the source root for "cli/...", "benchmark/..."
# includes, and the optional libraries' switches).
#
# shoal_cli_part(NAME SOURCES...): an object library NAME of the command's
# sources in the calling directory; cli/ links every part into the command.
#
# shoal_cli_register(TABLE SYMBOL): SYMBOL, a `const cli_command_t` defined
# in a part's sources, joins the command's TABLE: `command` (a subcommand of
# its own, after those of cli/), `experiment` (a kind of `shoal experiment`),
# `validate` (a suite of `shoal validate`), `bench` (a kind of `shoal
# bench`) or `plot` (a kind of `shoal plot`, in a build with plot support).
# Tables keep the order of registration. A new experiment is a
# directory of experiments/ with a CMakeLists.txt that makes its part and
# registers it: no file of cli/ changes (docs/experiments.md).

add_library(shoal_cli_common INTERFACE)
target_link_libraries(shoal_cli_common INTERFACE shoal_internal)
target_include_directories(shoal_cli_common INTERFACE ${PROJECT_SOURCE_DIR})
if(SHOAL_WITH_PLOT)
  target_compile_definitions(shoal_cli_common INTERFACE SHOAL_WITH_PLOT=1)
endif()

set(SHOAL_CLI_TABLES command experiment validate bench plot)

function(shoal_cli_part name)
  add_library(${name} OBJECT ${ARGN})
  target_link_libraries(${name} PRIVATE shoal_cli_common)
  set_property(GLOBAL APPEND PROPERTY SHOAL_CLI_PARTS ${name})
endfunction()

# shoal_cli_plot(NAME SOURCES...): in a build with plot support
# (SHOAL_WITH_PLOT, cairo), SOURCES join part NAME with cairo; without it,
# nothing (the command's `plot` then says how to get it).
function(shoal_cli_plot name)
  if(SHOAL_WITH_PLOT)
    target_sources(${name} PRIVATE ${ARGN})
    target_link_libraries(${name} PRIVATE PkgConfig::CAIRO)
  endif()
endfunction()

function(shoal_cli_register table symbol)
  if(NOT table IN_LIST SHOAL_CLI_TABLES)
    message(FATAL_ERROR "shoal_cli_register: no table '${table}' (${SHOAL_CLI_TABLES})")
  endif()
  set_property(GLOBAL APPEND PROPERTY SHOAL_CLI_TABLE_${table} ${symbol})
endfunction()

# OUTPUT: a C file with the tables cli/cli.h declares, NULL-terminated.
function(shoal_cli_write_tables output)
  set(decls "")
  set(tables "")
  foreach(table IN LISTS SHOAL_CLI_TABLES)
    get_property(symbols GLOBAL PROPERTY SHOAL_CLI_TABLE_${table})
    string(APPEND tables "\nconst cli_command_t* const cli_table_${table}[] = {\n")
    foreach(symbol IN LISTS symbols)
      string(APPEND decls "extern const cli_command_t ${symbol};\n")
      string(APPEND tables "    &${symbol},\n")
    endforeach()
    string(APPEND tables "    NULL,\n};\n")
  endforeach()
  file(CONFIGURE OUTPUT ${output} CONTENT
"/* The command's tables, written by cmake/shoal_cli.cmake from the
 * registrations of the CMakeLists.txt files of benchmark/ and experiments/. */
#include <stddef.h>

#include \"cli/cli.h\"

${decls}${tables}" @ONLY)
endfunction()
