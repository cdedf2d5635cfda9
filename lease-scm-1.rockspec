-- lease-scm-1.rockspec: build and install the lease Lua module with
-- luarocks, through the project's CMake (type "cmake", as luv does).
--   luarocks --lua-version=5.4 make            in a clone (5.3, 5.1 too)
--   luarocks --lua-version=5.4 --tree T make   into the tree T
-- The Lua is luarocks' own: its headers and interpreter are passed to CMake,
-- which builds for that version (LuaJIT when the interpreter is LuaJIT).
-- Installs the module and the `lease` program (the tree's bin/lease).
rockspec_format = "3.0"
package = "lease"
version = "scm-1"
source = {
  -- LEASE_SOURCE_URL: the repository this rockspec is published with.
  url = "git+https://github.com/lease/lease.git",
}
description = {
  summary = "Embedded lease engine on SQLite: owners, lease deadlines and fencing tokens",
  detailed = [[
    Every job carries an owner, a lease deadline and a fencing token that only
    grows; every write (renew, complete, release) checks all three in the
    SQLite transaction that stores it, so a worker whose lease ran out cannot
    store a late result. Handles, path functions, native worker threads and a
    worker pool, for Lua 5.4, 5.3, 5.1 and LuaJIT.
  ]],
  license = "MIT",
  labels = { "sqlite", "lease", "fencing", "jobs", "queue" },
}
dependencies = {
  "lua >= 5.1, < 5.5",
}
external_dependencies = {
  SQLITE3 = { header = "sqlite3.h", library = "sqlite3" },
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_C_FLAGS = "$(CFLAGS)",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    SQLite3_INCLUDE_DIR = "$(SQLITE3_INCDIR)",
    LEASE_LUA_INTERPRETER = "$(LUA)",
    LEASE_LUA_INCDIR = "$(LUA_INCDIR)",
    LEASE_LUA_LIBDIR = "$(LUA_LIBDIR)",
    LEASE_ROCK_LIBDIR = "$(LIBDIR)",
    LEASE_ROCK_BINDIR = "$(BINDIR)",
  },
}
