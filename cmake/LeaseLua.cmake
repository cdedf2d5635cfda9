# LeaseLua.cmake: find the Lua that lease is built for.
#
# In:  LEASE_LUA  5.4 (default), 5.3, 5.1 or luajit.
#      LEASE_LUA_INCDIR, LEASE_LUA_INTERPRETER (optional): given by luarocks
#      (the rockspec passes its $(LUA_INCDIR) and $(LUA)); they take
#      precedence over pkg-config, and when LEASE_LUA is not set, the
#      interpreter's version decides it.
# Out: LEASE_LUA_ABI          5.4, 5.3 or 5.1 (LuaJIT is 5.1): the module dir
#      LUA_INCLUDE_DIR        the header directories (a list)
#      LUA_LIBRARY            the library the host program links (may be empty
#                             when only the module is built)
#      LUA_INTERPRETER        the interpreter that runs the specs
#      target lease_lua_api   INTERFACE: include directories of the Lua API
#
# Lookup order: pkg-config (Debian: lua5.4, lua5.3, lua5.1, luajit; other
# systems: lua-5.4, lua54, lua), then CMake's FindLua.

# When luarocks names the interpreter but not the version, ask it.
if(NOT DEFINED LEASE_LUA AND LEASE_LUA_INTERPRETER)
  execute_process(COMMAND ${LEASE_LUA_INTERPRETER} -e "io.write(jit and 'luajit' or _VERSION:sub(5))"
                  OUTPUT_VARIABLE _lease_lua_guess RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _lease_lua_guess MATCHES "^(5\\.[134]|luajit)$")
    set(LEASE_LUA ${_lease_lua_guess} CACHE STRING "Lua to build for: 5.4, 5.3, 5.1 or luajit")
  endif()
endif()
set(LEASE_LUA "5.4" CACHE STRING "Lua to build for: 5.4, 5.3, 5.1 or luajit")
set_property(CACHE LEASE_LUA PROPERTY STRINGS 5.4 5.3 5.1 luajit)

if(LEASE_LUA STREQUAL "luajit")
  set(LEASE_LUA_ABI 5.1)
  set(_pc_names luajit)
  set(_lua_names luajit)
  set(_lib_names luajit-5.1 luajit)
elseif(LEASE_LUA MATCHES "^5\\.[134]$")
  set(LEASE_LUA_ABI ${LEASE_LUA})
  string(REPLACE "." "" _nodot ${LEASE_LUA})
  set(_pc_names lua${LEASE_LUA} lua-${LEASE_LUA} lua${_nodot})
  set(_lua_names lua${LEASE_LUA} lua-${LEASE_LUA} lua${_nodot})
  set(_lib_names lua${LEASE_LUA} lua-${LEASE_LUA} lua${_nodot})
else()
  message(FATAL_ERROR "LEASE_LUA must be 5.4, 5.3, 5.1 or luajit, got '${LEASE_LUA}'")
endif()

unset(_inc)
unset(_lib)
unset(_interp)
if(LEASE_LUA_INCDIR)
  # luarocks: its idea of the headers wins; the module needs no library.
  set(_inc ${LEASE_LUA_INCDIR})
  find_library(_lib NAMES ${_lib_names} HINTS ${LEASE_LUA_LIBDIR} NO_CACHE)
else()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_search_module(LEASE_LUA_PC QUIET ${_pc_names})
  endif()
  if(LEASE_LUA_PC_FOUND)
    set(_inc ${LEASE_LUA_PC_INCLUDE_DIRS})
    find_library(_lib NAMES ${LEASE_LUA_PC_LIBRARIES} HINTS ${LEASE_LUA_PC_LIBRARY_DIRS} NO_CACHE)
    message(STATUS "lease: Lua ${LEASE_LUA} from pkg-config ${LEASE_LUA_PC_MODULE_NAME}")
  elseif(LEASE_LUA STREQUAL "luajit")
    find_path(_inc luajit.h PATH_SUFFIXES luajit-2.1 luajit-2.0 luajit NO_CACHE REQUIRED)
    find_library(_lib NAMES ${_lib_names} NO_CACHE REQUIRED)
  else()
    find_package(Lua ${LEASE_LUA} EXACT REQUIRED)
    set(_inc ${LUA_INCLUDE_DIR})
    list(GET LUA_LIBRARIES 0 _lib)
    message(STATUS "lease: Lua ${LEASE_LUA} from find_package(Lua): ${_inc}")
  endif()
endif()

# Lua 5.1 and LuaJIT: lua-compat53's headers (Debian lua-compat53-dev puts
# them beside the 5.1 headers), after the Lua headers so that lua.h is the
# selected Lua's.
if(LEASE_LUA_ABI STREQUAL "5.1")
  find_path(_compat compat-5.3.h PATH_SUFFIXES lua5.1 lua-compat53 compat53 HINTS ${_inc} NO_CACHE)
  if(_compat)
    list(APPEND _inc ${_compat})
  endif()
endif()
list(REMOVE_DUPLICATES _inc)

if(LEASE_LUA_INTERPRETER)
  set(_interp ${LEASE_LUA_INTERPRETER})
else()
  find_program(_interp NAMES ${_lua_names} NO_CACHE)
endif()

if(NOT _inc)
  message(FATAL_ERROR "lease: no headers found for Lua ${LEASE_LUA}")
endif()
if(NOT _lib)
  set(_lib "")
endif()
if(NOT _interp)
  set(_interp "")
endif()
# Normal variables (never cached), so that changing LEASE_LUA in a tree
# finds everything again.
set(LUA_INCLUDE_DIR ${_inc})
set(LUA_LIBRARY ${_lib})
set(LUA_INTERPRETER ${_interp})

if(NOT TARGET lease_lua_api)
  add_library(lease_lua_api INTERFACE)
  target_include_directories(lease_lua_api INTERFACE ${LUA_INCLUDE_DIR})
endif()
