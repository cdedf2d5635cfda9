/*
** host.c: the `lease` program, a Lua 5.4 host with the lease module built
** in, shaped like Lua's own lua.c.
**
**   lease script.lua [args]    run a script; `arg` as lua.c sets it
**   lease -e 'code' [...]      run code (repeatable; a script may follow)
**   lease -                    run standard input
**   lease -v | --version       print the versions
**   lease -h | --help          print the usage
**   lease <subcommand> [args]  a built-in command (table `subcommands`)
**
** `lease` and `lease.thread` are in package.preload, so a script needs no
** cpath to find them, and the module's code runs inside this program: a
** sanitizer build of the program (LEASE_SANITIZE) instruments the module
** too, which Debian's lua5.4 (static Lua, uninstrumented) cannot do.  The
** program links Debian's liblua5.4.so and exports its symbols (-Wl,-E), so
** scripts can still require Debian's C modules (busted needs system.core
** and term.core).
**
** As in lua.c: main pushes one C function (pmain) and lua_pcall's it, so
** even setup errors are caught; one message handler adds the traceback;
** one place (report) prints errors, once; a signal only sets a hook.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <sqlite3.h>

#include "lease.h"
#include "lease_lua.h"

static const char *progname = "lease";

/*
** The state a SIGINT interrupts.  Process-wide by nature (a signal handler
** has no other way in); written once before the handler is installed and
** cleared after, as lua.c's globalL.
*/
static lua_State *globalL = NULL;

/* ===================================================================== */
/* Signals (lua.c's lstop / laction)                                      */
/* ===================================================================== */

/* Hook set by the signal handler: stop the interpreted program with an
** error at the next instruction, then remove itself. */
static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

/* SIGINT handler: restore the default action (a second Ctrl-C kills) and
** set the hook; never touches the state otherwise. */
static void laction(int i) {
  int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
  signal(i, SIG_DFL);
  lua_sethook(globalL, lstop, flag, 1);
}

/* ===================================================================== */
/* Messages                                                               */
/* ===================================================================== */

static void print_subcommands(FILE *f);

/* Print the usage to f. */
static void print_usage(FILE *f) {
  fprintf(f,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat        execute string 'stat' (repeatable)\n"
          "  -v, --version  show version information\n"
          "  -h, --help     show this help\n"
          "  --             stop handling options\n"
          "  -              execute stdin and stop handling options\n"
          "The modules lease, lease.thread, lease.pool and lease.cli are preloaded.\n",
          progname);
  print_subcommands(f);
  fflush(f);
}

/* Print an error message, prefixed with the program name when given. */
static void l_message(const char *pname, const char *msg) {
  if (pname) fprintf(stderr, "%s: ", pname);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

/* The one place errors are printed: the message on top of the stack, if
** status is not OK.  Returns status. */
static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    if (msg == NULL) msg = "(error object is not a string)";
    l_message(progname, msg);
    lua_pop(L, 1);
  }
  return status;
}

/* Call the function below narg arguments with the message handler
** (lease_lua_traceback, shared with lease.thread), and
** with SIGINT interrupting it. */
static int docall(lua_State *L, int narg, int nres) {
  int status;
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, lease_lua_traceback);
  lua_insert(L, base);
  globalL = L;
  signal(SIGINT, laction);
  status = lua_pcall(L, narg, nres, base);
  signal(SIGINT, SIG_DFL);
  globalL = NULL;
  lua_remove(L, base);
  return status;
}

/* Print the versions of this program, Lua and SQLite. */
static void print_version(void) {
  printf("lease %s (%s, SQLite %s)\n", LEASE_VERSION, LUA_RELEASE, sqlite3_libversion());
  fflush(stdout);
}

/* ===================================================================== */
/* Running code                                                           */
/* ===================================================================== */

/*
** Create the global `arg` as lua.c does: arg[0] is the script, the
** arguments after it are arg[1..n], the ones before are negative.
*/
static void createargtable(lua_State *L, char **argv, int argc, int script) {
  int i, narg;
  if (script == argc) script = 0;   /* no script: the program name is arg[0] */
  narg = argc - (script + 1);
  lua_createtable(L, narg, script + 1);
  for (i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Run a chunk just loaded (status from the load). */
static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

/* Run the string s (option -e). */
static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* Push the script's arguments (arg[1..n]) and return how many. */
static int pushargs(lua_State *L) {
  int i, n;
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -i);
  return n;
}

/* Load and run the script argv[0] ("-" is stdin) with its arguments. */
static int handle_script(lua_State *L, char **argv) {
  int status;
  const char *fname = argv[0];
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL;   /* stdin */
  status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = pushargs(L);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

/* ===================================================================== */
/* Subcommands                                                            */
/* ===================================================================== */

/*
** A built-in command: `lease <name> [args]`.  run is called protected with
** `arg` set as for a script (arg[0] is the name); it raises on failure and
** may return an integer exit status (none means 0).  A script whose name
** equals a subcommand's can still be run as ./name.
*/
typedef struct subcommand {
  const char *name;
  lua_CFunction run;
  const char *help;   /* one line for --help */
} subcommand;

/*
** Run a subcommand written in Lua: require("lease.cli").main(argv) with
** argv = {name, args...} from the global `arg`.  Returns its exit status.
*/
static int cmd_cli(lua_State *L) {
  lua_Integer i, n;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "lease.cli");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_getglobal(L, "arg");
  n = (lua_Integer)luaL_len(L, -1);
  lua_createtable(L, (int)n + 1, 0);
  for (i = 0; i <= n; i++) {
    lua_geti(L, -2, i);
    lua_seti(L, -2, i + 1);
  }
  lua_remove(L, -2);
  lua_call(L, 1, 1);
  return 1;
}

static const subcommand subcommands[] = {
  {"pool", cmd_cli, "pool [-j N] [--ttl S] [--quiet] WORKER.lua DB   run worker threads over DB's jobs"},
  {"jobs", cmd_cli, "jobs DB [--ready|--held|--done|--blocked] [--json] [--now T]   list jobs"},
  {"show", cmd_cli, "show DB ID [--json] [--now T]   show one job and its result"},
  {NULL, NULL, NULL},
};

/* Print the subcommands, one line each, for --help. */
static void print_subcommands(FILE *f) {
  const subcommand *s;
  fprintf(f, "Commands:\n");
  for (s = subcommands; s->name; s++) fprintf(f, "  %s %s\n", progname, s->help);
}

/* The subcommand called name, or NULL. */
static const subcommand *find_subcommand(const char *name) {
  const subcommand *s;
  for (s = subcommands; s->name; s++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

/* ===================================================================== */
/* Options and main                                                       */
/* ===================================================================== */

/* What the command line asks for. */
enum { HAS_ERROR = 1, HAS_V = 2, HAS_H = 4, HAS_E = 8 };

/*
** Scan the options (lua.c's collectargs).  Returns the bits above and sets
** *first to the index of the script (or argc when there is none).
*/
static int collectargs(char **argv, int *first) {
  int args = 0, i;
  for (i = 1; argv[i] != NULL; i++) {
    *first = i;
    if (argv[i][0] != '-') return args;   /* not an option: the script */
    if (strcmp(argv[i], "--") == 0) {
      *first = i + 1;
      return args;
    }
    if (strcmp(argv[i], "-") == 0) return args;   /* stdin is the script */
    if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--version") == 0) args |= HAS_V;
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) args |= HAS_H;
    else if (strncmp(argv[i], "-e", 2) == 0) {   /* -e code, or -ecode */
      args |= HAS_E;
      if (argv[i][2] == '\0') {   /* the code is the next argument */
        i++;
        if (argv[i] == NULL || argv[i][0] == '-') return HAS_ERROR;
      }
    } else {
      *first = i;
      return HAS_ERROR;
    }
  }
  *first = i;
  return args;
}

/* Run every -e option in order, up to the script.  Returns 1 when all ran. */
static int runargs(lua_State *L, char **argv, int n) {
  int i;
  for (i = 1; i < n; i++) {
    if (strncmp(argv[i], "-e", 2) == 0) {
      const char *code = argv[i][2] ? argv[i] + 2 : argv[++i];
      if (dostring(L, code, "=(command line)") != LUA_OK) return 0;
    }
  }
  return 1;
}

/*
** The protected main: open the libraries, preload lease, then do what the
** command line says.  Pushes a boolean (true on success) or, for a
** subcommand, its integer exit status.
*/
static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  const subcommand *sub;
  int script = 0, args;
  luaL_checkversion(L);
  luaL_openlibs(L);
  lease_lua_preload_all(L);   /* lease, lease.thread, lease.pool, lease.cli */
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);

  if (argc > 1 && (sub = find_subcommand(argv[1])) != NULL) {
    int code;
    createargtable(L, argv, argc, 1);
    lua_pushcfunction(L, sub->run);
    if (report(L, docall(L, 0, 1)) != LUA_OK) return 0;
    code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_pushinteger(L, code >= 0 && code < 256 ? code : EXIT_FAILURE);
    return 1;
  }
  args = collectargs(argv, &script);
  if (args == HAS_ERROR) {
    if (argv[script] && strncmp(argv[script], "-e", 2) == 0)
      l_message(progname, "'-e' needs an argument");
    else
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, argv[script]);
    print_usage(stderr);
    return 0;
  }
  if (args & HAS_H) {
    print_usage(stdout);
    lua_pushboolean(L, 1);
    return 1;
  }
  if (args & HAS_V) print_version();
  createargtable(L, argv, argc, script);
  if (!runargs(L, argv, script)) return 0;
  if (script < argc && handle_script(L, argv + script) != LUA_OK) return 0;
  if (script >= argc && !(args & (HAS_E | HAS_V))) {
    l_message(progname, "no script given");
    print_usage(stderr);
    return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* Create the state, run pmain protected, report, close.  Never exit()s:
** returns the status. */
int main(int argc, char **argv) {
  int status, result;
  lua_State *L = luaL_newstate();
  if (argv[0] && argv[0][0]) progname = argv[0];
  if (L == NULL) {
    l_message(progname, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  status = lua_pcall(L, 2, 1, 0);
  /* pmain gives true (success), false or nothing (failure, reported), or a
  ** subcommand's exit status as an integer */
  if (lua_isinteger(L, -1)) result = (int)lua_tointeger(L, -1);
  else result = lua_toboolean(L, -1) ? EXIT_SUCCESS : EXIT_FAILURE;
  report(L, status);
  lua_close(L);
  return status == LUA_OK ? result : EXIT_FAILURE;
}
