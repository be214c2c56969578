# Writes the tool's version.cc from version.cc.in with the git revision of the
# source tree as it is when the tool is built, not when the build was
# configured: results files and resume journals record the commit that built
# the binary. Run by the distir_version target at every build
# (src/tools/CMakeLists.txt); configure_file leaves the file untouched when its
# text is unchanged, so an unchanged revision recompiles nothing.
# Inputs (-D): SOURCE_DIR, INPUT, OUTPUT, PROJECT_VERSION.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE DISTIR_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT DISTIR_GIT_REVISION)
  set(DISTIR_GIT_REVISION "unknown")
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
