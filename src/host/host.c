/*
** host.c: the `lease` program, a Lua host with the lease module built in,
** behaving like Lua's own lua.c (5.4): the same options, `arg` table,
** LUA_INIT handling, interactive prompt and exit statuses, plus built-in
** subcommands.  It builds against the Lua the module is configured for
** (5.4, 5.3, 5.1 or LuaJIT 2.1) through lease_lua_compat.h; on a Lua
** before 5.4, -W is accepted and does nothing (no warnings there), the
** collector keeps its incremental mode, and before 5.3 only LUA_INIT (no
** versioned variable) is read, as that version's lua.c does; on 5.1 and
** LuaJIT, -E sets package.path and package.cpath to their defaults itself
** (PUC Lua 5.1's package library knows no LUA_NOENV).
**
**   lease [options] [script [args]]   as lua: -e stat, -l mod, -l g=mod,
**                                     -i, -v, -E, -W, --, - (stdin)
**   lease                             a prompt on a terminal, else stdin
**   lease -h | --help | --version     the usage (from lease.cli), the version
**   lease COMMAND [args]              a subcommand of lease.cli (pool,
**                                     enqueue, jobs, show, retry, cancel,
**                                     prune, web, ...); a first argument that
**                                     is a word (no '.' or '/') always names
**                                     a command
**
** `lease`, `lease.thread` and the Lua modules of lua/lease/ (lease.pool,
** lease.cli, lease.json, lease.observe, lease.web, lease.compat,
** lease.testing; lease.httpd with libmicrohttpd) are in package.preload,
** so a script needs no
** cpath to find them, and the module's code runs inside this program: a
** sanitizer build of the program (LEASE_SANITIZE) instruments the module
** too, which Debian's lua5.4 (static Lua, uninstrumented) cannot do.  The
** program links Debian's liblua (liblua5.4.so by default) and exports its
** symbols (-Wl,-E), so
** scripts can still require Debian's C modules (busted needs system.core
** and term.core).
**
** The prompt reads lines with fgets, as lua.c does when built without
** LUA_USE_READLINE: no line editing or history.
**
** As in lua.c: main pushes one C function (pmain) and lua_pcall's it, so
** even setup errors are caught; one message handler adds the traceback;
** one place (report) prints errors, once; a signal only sets a hook.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include <sqlite3.h>

#include "lease.h"
#include "lease_lua_compat.h"
#include "lease_lua.h"
#ifdef LEASE_HAVE_MHD
#include "host_httpd.h"
#endif

/* The environment variables run before anything else (lua.c's names). */
#define LEASE_INIT_VAR "LUA_INIT"
#ifdef LUA_VERSUFFIX
#  define LEASE_INIT_VARVERSION LEASE_INIT_VAR LUA_VERSUFFIX   /* LUA_INIT_5_4 */
#endif

/*
** host_gc(L, what): lua_gc with no data argument; 5.4 takes varargs, the
** earlier versions one int.  host_gc_generational: switch the collector
** to generational mode as lua.c 5.4 does; earlier versions have none.
*/
#if LUA_VERSION_NUM >= 504
#  define host_gc(L, what) lua_gc((L), (what))
#  define host_gc_generational(L) lua_gc((L), LUA_GCGEN, 0, 0)
#else
#  define host_gc(L, what) lua_gc((L), (what), 0)
#  define host_gc_generational(L) ((void)(L))
#endif

#define LEASE_PROMPT "> "
#define LEASE_PROMPT2 ">> "
#define LEASE_MAXINPUT 512   /* bytes per line read at the prompt */

/* The program's name for messages; NULL while the prompt runs (lua.c). */
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

/* Print the usage to f: the text lease.cli.usage gives (the one place it
** is written).  Raises if lease.cli cannot be loaded. */
static void print_usage(lua_State *L, FILE *f) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "lease.cli");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "usage");
  lua_pushstring(L, progname ? progname : "lease");
  lua_call(L, 1, 1);
  fputs(luaL_checkstring(L, -1), f);
  fflush(f);
  lua_pop(L, 2);
}

/* Print the versions of this program, Lua and SQLite. */
static void print_version(void) {
  printf("lease %s (%s, SQLite %s)\n", LEASE_VERSION, LUA_RELEASE, sqlite3_libversion());
  fflush(stdout);
}

/* ===================================================================== */
/* Running code (lua.c's dochunk, dofile, dostring, dolibrary)            */
/* ===================================================================== */

/*
** Create the global `arg` as lua.c does: arg[0] is argv[script], the
** arguments after it are arg[1..n], the ones before are negative.  With no
** script (script == 0) the program name is arg[0].
*/
static void createargtable(lua_State *L, char **argv, int argc, int script) {
  int i, narg;
  narg = argc - (script + 1);
  lua_createtable(L, narg > 0 ? narg : 0, script + 1);
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

/* Run the file name (NULL: standard input). */
static int dofile(lua_State *L, const char *name) {
  return dochunk(L, luaL_loadfile(L, name));
}

/* Run the string s (option -e, LUA_INIT) as the chunk called name. */
static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* Option -l: "mod" runs mod = require("mod"); "g=mod" runs
** g = require("mod").  spec is not changed. */
static int dolibrary(lua_State *L, const char *spec) {
  int status;
  const char *eq = strchr(spec, '=');
  const char *modname = eq ? eq + 1 : spec;
  lua_getglobal(L, "require");
  lua_pushstring(L, modname);
  status = docall(L, 1, 1);
  if (status == LUA_OK) {
    if (eq) lua_pushlstring(L, spec, (size_t)(eq - spec));
    else lua_pushstring(L, spec);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return report(L, status);
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

/* Load and run the script argv[0] ("-" is stdin, unless after "--") with
** its arguments. */
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

/* Run LUA_INIT_5_4 (LUA_INIT_5_3 on 5.3; none before), or else LUA_INIT:
** "@file" runs the file, anything else runs as code.  Not called under
** -E. */
static int handle_luainit(lua_State *L) {
  const char *name = NULL;
  const char *init = NULL;
#ifdef LEASE_INIT_VARVERSION
  name = "=" LEASE_INIT_VARVERSION;
  init = getenv(name + 1);
#endif
  if (init == NULL) {
    name = "=" LEASE_INIT_VAR;
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dofile(L, init + 1);
  return dostring(L, init, name);
}

/* ===================================================================== */
/* The prompt (lua.c's REPL, reading with fgets)                          */
/* ===================================================================== */

/* The prompt to show: _PROMPT or _PROMPT2 through tostring, or the
** default.  Leaves one value on the stack to anchor the string. */
static const char *get_prompt(lua_State *L, int firstline) {
  if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL)
    return firstline ? LEASE_PROMPT : LEASE_PROMPT2;
  else {
    const char *p = luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);
    return p;
  }
}

/* Whether status is a syntax error at the end of the input (a statement
** that more lines may complete); pops the message if so. */
static int incomplete(lua_State *L, int status) {
#if LUA_VERSION_NUM >= 502
  static const char mark[] = "<eof>";
#else
  static const char mark[] = "'<eof>'";   /* 5.1 and LuaJIT quote it */
#endif
  if (status == LUA_ERRSYNTAX) {
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    if (lmsg >= sizeof mark - 1 && strcmp(msg + lmsg - (sizeof mark - 1), mark) == 0) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

/* Show the prompt, read a line and push it (without its newline; a first
** line "=x" becomes "return x").  Returns 0 at end of input. */
static int pushline(lua_State *L, int firstline) {
  char buffer[LEASE_MAXINPUT];
  size_t l;
  const char *prompt = get_prompt(L, firstline);
  fputs(prompt, stdout);
  fflush(stdout);
  if (fgets(buffer, sizeof buffer, stdin) == NULL) return 0;   /* prompt popped by the caller */
  lua_pop(L, 1);
  l = strlen(buffer);
  if (l > 0 && buffer[l - 1] == '\n') buffer[--l] = '\0';
  if (firstline && buffer[0] == '=') lua_pushfstring(L, "return %s", buffer + 1);
  else lua_pushlstring(L, buffer, l);
  return 1;
}

/* Try the line on the stack as "return <line>;"; leaves the compiled
** chunk, or the line when that did not compile. */
static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
  if (status == LUA_OK) lua_remove(L, -2);
  else lua_pop(L, 2);
  return status;
}

/* Read more lines until the statement compiles or fails for another
** reason than ending too soon. */
static int multiline(lua_State *L) {
  for (;;) {
    size_t len;
    const char *line = lua_tolstring(L, 1, &len);
    int status = luaL_loadbuffer(L, line, len, "=stdin");
    if (!incomplete(L, status) || !pushline(L, 0)) return status;
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* Read and compile one entry: as an expression first, else as a
** statement.  Returns -1 at end of input, else the status, with the chunk
** (or the error message) alone on the stack. */
static int loadline(lua_State *L) {
  int status;
  lua_settop(L, 0);
  if (!pushline(L, 1)) return -1;
  if ((status = addreturn(L)) != LUA_OK) status = multiline(L);
  lua_remove(L, 1);
  return status;
}

/* Print the values on the stack with the global print. */
static void l_print(lua_State *L) {
  int n = lua_gettop(L);
  if (n > 0) {
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK)
      l_message(progname, lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1)));
  }
}

/* The read-eval-print loop, until end of input.  Errors are printed
** without the program name, as lua.c does. */
static void doREPL(lua_State *L) {
  int status;
  const char *oldprogname = progname;
  progname = NULL;
  while ((status = loadline(L)) != -1) {
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) l_print(L);
    else report(L, status);
  }
  lua_settop(L, 0);
  fputs("\n", stdout);
  fflush(stdout);
  progname = oldprogname;
}

/* ===================================================================== */
/* Subcommands                                                            */
/* ===================================================================== */

/* Preload what the module does (lease_lua_preload_all) and, in a build
** with libmicrohttpd, lease.httpd (host_httpd.c) for `lease web`. */
static void preload(lua_State *L) {
  lease_lua_preload_all(L);
#ifdef LEASE_HAVE_MHD
  lb_pushpreload(L);
  lua_pushcfunction(L, luaopen_lease_httpd);
  lua_setfield(L, -2, "lease.httpd");
  lua_pop(L, 1);
#endif
}

/*
** Whether argv[1] names a subcommand rather than a script: a word of
** letters, digits, '_' and '-' starting with a letter.  A script file
** called like that is run as ./name.
*/
static int is_command_word(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
  for (; *s; s++) {
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '-'))
      return 0;
  }
  return 1;
}

/*
** Run `lease <word> [args]`: require("lease.cli").main(argv) with
** argv = {word, args...} from the global `arg`, protected.  Pushes its
** integer exit status (an unknown word is its usage error, status 2).
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

/* ===================================================================== */
/* Options and main                                                       */
/* ===================================================================== */

/* What the command line asks for (lua.c's bits, and -h/--help). */
enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8, HAS_EENV = 16, HAS_H = 32 };

/*
** Scan the options (lua.c's collectargs).  Returns the bits above, or
** HAS_ERROR with *first the index of the bad option.  Otherwise *first is
** the index of the script, or 0 when there is none.
*/
static int collectargs(char **argv, int *first) {
  int args = 0, i;
  for (i = 1; argv[i] != NULL; i++) {
    const char *a = argv[i];
    *first = i;
    if (a[0] != '-') return args;   /* not an option: the script */
    if (strcmp(a, "--help") == 0) { args |= HAS_H; continue; }
    if (strcmp(a, "--version") == 0) { args |= HAS_V; continue; }
    switch (a[1]) {
      case '-':   /* "--" */
        if (a[2] != '\0') return HAS_ERROR;
        *first = argv[i + 1] ? i + 1 : 0;
        return args;
      case '\0':   /* "-": the script is stdin */
        return args;
      case 'E':
        if (a[2] != '\0') return HAS_ERROR;
        args |= HAS_EENV;
        break;
      case 'W':
        if (a[2] != '\0') return HAS_ERROR;
        break;
      case 'h':
        if (a[2] != '\0') return HAS_ERROR;
        args |= HAS_H;
        break;
      case 'i':
        args |= HAS_I;   /* -i implies -v */
        /* FALLTHROUGH */
      case 'v':
        if (a[2] != '\0') return HAS_ERROR;
        args |= HAS_V;
        break;
      case 'e':
        args |= HAS_E;
        /* FALLTHROUGH */
      case 'l':   /* both take an argument, joined or next */
        if (a[2] == '\0') {
          i++;
          if (argv[i] == NULL || argv[i][0] == '-') return HAS_ERROR;
        }
        break;
      default:
        return HAS_ERROR;
    }
  }
  *first = 0;
  return args;
}

/* Run the -e, -l and -W options in order, before the script argv[n].
** Returns 1 when all ran. */
static int runargs(lua_State *L, char **argv, int n) {
  int i;
  for (i = 1; i < n; i++) {
    int option = argv[i][1];
    if (argv[i][0] != '-' || argv[i][1] == '-') continue;   /* --help, --version */
    if (option == 'e' || option == 'l') {
      const char *extra = argv[i][2] ? argv[i] + 2 : argv[++i];
      int status = option == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
      if (status != LUA_OK) return 0;
    } else if (option == 'W') {
#if LUA_VERSION_NUM >= 504
      lua_warning(L, "@on", 0);
#endif
    }
  }
  return 1;
}

/* Report a bad option (argv[bad]) and print the usage to stderr. */
static void bad_option(lua_State *L, const char *bad) {
  if (bad[1] == 'e' || bad[1] == 'l')
    fprintf(stderr, "%s: '%s' needs an argument\n", progname, bad);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", progname, bad);
  print_usage(L, stderr);
}

/*
** The protected main: open the libraries, preload lease, then do what the
** command line says, in lua.c's order: -v, LUA_INIT, -e/-l/-W, the script,
** then -i or, with nothing else to do, the prompt (a terminal) or stdin.
** Pushes true on success, or a subcommand's integer exit status.
*/
static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int script = 0, args = 0, optlim;
  luaL_checkversion(L);
  if (argc > 1 && is_command_word(argv[1])) {
    luaL_openlibs(L);
    preload(L);
    host_gc(L, LUA_GCRESTART);
    host_gc_generational(L);
    createargtable(L, argv, argc, 1);
    lua_pushcfunction(L, cmd_cli);
    if (report(L, docall(L, 0, 1)) != LUA_OK) return 0;
    {
      int code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
      lua_pushinteger(L, code >= 0 && code < 256 ? code : EXIT_FAILURE);
    }
    return 1;
  }
  if (argc > 0) args = collectargs(argv, &script);
  if (args & HAS_EENV) {   /* -E: the libraries ignore LUA_PATH and LUA_CPATH */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
#if LUA_VERSION_NUM < 502
  if (args & HAS_EENV) {   /* 5.1's package library reads no LUA_NOENV: reset the paths */
    lua_getglobal(L, LUA_LOADLIBNAME);
    lua_pushliteral(L, LUA_PATH_DEFAULT);
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, LUA_CPATH_DEFAULT);
    lua_setfield(L, -2, "cpath");
    lua_pop(L, 1);
  }
#endif
  preload(L);   /* lease, lease.thread, lease.pool, lease.cli, ..., lease.httpd */
  if (args == HAS_ERROR) {
    bad_option(L, argv[script]);
    return 0;
  }
  if (args & HAS_H) {
    print_usage(L, stdout);
    lua_pushboolean(L, 1);
    return 1;
  }
  if (args & HAS_V) print_version();
  optlim = script > 0 ? script : argc;
  createargtable(L, argv, argc, script);
  host_gc(L, LUA_GCRESTART);
  host_gc_generational(L);
  if (!(args & HAS_EENV) && handle_luainit(L) != LUA_OK) return 0;
  if (!runargs(L, argv, optlim)) return 0;
  if (script > 0 && handle_script(L, argv + script) != LUA_OK) return 0;
  if (args & HAS_I) {
    doREPL(L);
  } else if (script == 0 && !(args & (HAS_E | HAS_V))) {
    if (isatty(0)) {
      print_version();
      doREPL(L);
    } else if (dofile(L, NULL) != LUA_OK) {
      return 0;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* Create the state, run pmain protected, report, close.  Never exit()s:
** returns the status. */
int main(int argc, char **argv) {
  int status, result;
  lua_State *L;
#ifdef __GLIBC__
  /* glibc gives a heap's free top back to the system (madvise, then page
  ** faults to take it again) whenever a free leaves it above the trim
  ** threshold, 128 KiB by default.  SQLite allocates and frees a 64 KiB
  ** statement-journal chunk for each write statement inside a transaction,
  ** so in a pool worker's thread heap that happens at nearly every job.
  ** This program keeps up to 8 MiB per heap instead, unless the
  ** environment sets the threshold itself. */
  {
    const char *tun = getenv("GLIBC_TUNABLES");
    if (!getenv("MALLOC_TRIM_THRESHOLD_") && !(tun && strstr(tun, "trim_threshold")))
      mallopt(M_TRIM_THRESHOLD, 8 << 20);
  }
#endif
  L = luaL_newstate();
  if (argv[0] && argv[0][0]) progname = argv[0];
  if (L == NULL) {
    l_message(progname, "cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  host_gc(L, LUA_GCSTOP);
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
