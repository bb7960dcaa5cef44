# The viewer page of `shoal view` and Python's shoal.view (docs/recording.md,
# "Viewing"): cli/viewer/viewer.html with its two libraries put in at
# build time (cli/viewer/embed.cmake), each optional:
#
# - three.js (Debian's libjs-three, r111): the agents drawn by WebGL, one
#   instanced mesh. SHOAL_THREE_JS: its three.min.js. Without it the page
#   draws them on a 2D canvas.
# - fzstd 0.1.1 (npm, MIT): zstd decoding in the page, so the page carries
#   recordings compressed (format versions 3 and 4) and its file button
#   opens every version. SHOAL_FZSTD_JS: its umd/index.js; by default
#   `npm pack fzstd@0.1.1` fetches it into the build directory at configure
#   time. Without it the page carries uncompressed frames (version 2) and
#   its file button opens versions 1 and 2.
#
# -DSHOAL_VIEWER_LIBS=OFF builds the page without either.
include_guard(GLOBAL)
option(SHOAL_VIEWER_LIBS "put three.js and fzstd in the viewer page where found" ON)
set(SHOAL_VIEWER_THREE "")
set(SHOAL_VIEWER_FZSTD "")
if(SHOAL_VIEWER_LIBS)
  find_file(SHOAL_THREE_JS three.min.js PATHS /usr/share/javascript/three NO_DEFAULT_PATH
    DOC "three.js (three.min.js, r111 or later) for the viewer page's WebGL drawing")
  if(SHOAL_THREE_JS AND EXISTS "${SHOAL_THREE_JS}")
    set(SHOAL_VIEWER_THREE "${SHOAL_THREE_JS}")
  endif()
  set(fzstd_dir ${PROJECT_BINARY_DIR}/fzstd)
  set(fzstd_js ${fzstd_dir}/package/umd/index.js)
  if(NOT SHOAL_FZSTD_JS AND NOT EXISTS "${fzstd_js}")
    find_program(SHOAL_NPM npm)
    if(SHOAL_NPM)
      file(MAKE_DIRECTORY ${fzstd_dir})
      execute_process(COMMAND ${SHOAL_NPM} pack fzstd@0.1.1 --silent WORKING_DIRECTORY ${fzstd_dir}
        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
      if(rc EQUAL 0 AND EXISTS ${fzstd_dir}/fzstd-0.1.1.tgz)
        execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf fzstd-0.1.1.tgz WORKING_DIRECTORY ${fzstd_dir})
      endif()
    endif()
  endif()
  if(NOT SHOAL_FZSTD_JS AND EXISTS "${fzstd_js}")
    # The file npm gave, checked against the one this page was tested with.
    file(SHA256 "${fzstd_js}" sum)
    if(sum STREQUAL "fbea1c25c4413b620ca3f59e6037d9f6c675c5c7f690e4d660143188f686461d")
      set(SHOAL_FZSTD_JS "${fzstd_js}" CACHE FILEPATH "fzstd's umd/index.js (0.1.1) for the viewer page")
    else()
      message(WARNING "${fzstd_js} is not fzstd 0.1.1's umd/index.js (SHA-256 ${sum}): not used")
    endif()
  endif()
  if(SHOAL_FZSTD_JS AND EXISTS "${SHOAL_FZSTD_JS}")
    set(SHOAL_VIEWER_FZSTD "${SHOAL_FZSTD_JS}")
  endif()
endif()
if(NOT SHOAL_VIEWER_LIBS)
  message(STATUS "viewer page: SHOAL_VIEWER_LIBS=OFF: no three.js and no fzstd: agents drawn on a 2D "
    "canvas, pages carry uncompressed frames (5 to 10 times larger)")
elseif(SHOAL_VIEWER_THREE)
  message(STATUS "viewer page: agents drawn by WebGL (three.js: ${SHOAL_VIEWER_THREE})")
else()
  message(STATUS "viewer page: no three.js (apt-get install libjs-three, or -DSHOAL_THREE_JS=PATH): "
    "agents drawn on a 2D canvas, slower past a few thousand")
endif()
if(NOT SHOAL_VIEWER_LIBS)
elseif(SHOAL_VIEWER_FZSTD)
  message(STATUS "viewer page: compressed frames (fzstd: ${SHOAL_VIEWER_FZSTD})")
else()
  message(STATUS "viewer page: no fzstd (needs npm at configure time, or -DSHOAL_FZSTD_JS=PATH to "
    "fzstd 0.1.1's umd/index.js): pages carry uncompressed frames, 5 to 10 times larger")
endif()

# TARGET gets the page compiled in (viewer_html.c in DIR) and DIR/viewer.html.
function(shoal_viewer_page target dir)
  # From the cache, which every directory sees (this file is read once).
  set(three "")
  set(fzstd "")
  if(SHOAL_VIEWER_LIBS)
    if(SHOAL_THREE_JS AND EXISTS "${SHOAL_THREE_JS}")
      set(three "${SHOAL_THREE_JS}")
    endif()
    if(SHOAL_FZSTD_JS AND EXISTS "${SHOAL_FZSTD_JS}")
      set(fzstd "${SHOAL_FZSTD_JS}")
    endif()
  endif()
  set(src ${PROJECT_SOURCE_DIR}/cli/viewer)
  add_custom_command(OUTPUT ${dir}/viewer_html.c ${dir}/viewer.html
    COMMAND ${CMAKE_COMMAND} -DINPUT=${src}/viewer.html -DOUTPUT=${dir}/viewer_html.c -DNAME=viewer_html
      -DPAGE=${dir}/viewer.html -DTHREE_JS=${three} -DFZSTD_JS=${fzstd}
      -P ${src}/embed.cmake
    DEPENDS ${src}/viewer.html ${src}/embed.cmake ${three} ${fzstd} VERBATIM)
  target_sources(${target} PRIVATE ${dir}/viewer_html.c)
endfunction()
