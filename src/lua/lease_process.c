/***
The process a worker runs in: its identity (host name, process id) for owner
names, and the signals that ask a worker service to shut down.
@module lease
*/
/*
** lease_process.c: lease.pid, lease.hostname, lease.on_signal and
** lease.signals, added to the module table by luaopen_lease through
** lease_lua_process_register.
**
** A caught signal only adds one to a process-wide counter (a lock-free
** atomic, safe in a signal handler) and records its number; whoever runs
** the service (lease.pool) reads the counter between jobs, in any thread,
** and decides what to do.  Nothing in the handler touches a Lua state: the
** same rule as lua.c's "a signal only sets a hook".
*/
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "lease_lua_int.h"

/* The handler below only does atomic stores, so they must not take a lock. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal counter needs a lock-free atomic_int");

/* The signals lease.on_signal knows, by the names users write. */
static const struct {
  const char *name;
  int signo;
} known_signals[] = {
  {"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT},
  {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};
#define NKNOWN ((int)(sizeof known_signals / sizeof known_signals[0]))

/* Signals caught since the process started, and the last one's number. */
static atomic_uint caught_count;
static atomic_int caught_last;

/* The action each known signal had before lease.on_signal first caught it,
** restored by on_signal(names, false).  Guarded by actions_mu (several
** threads may call on_signal). */
static struct sigaction saved_action[NKNOWN];
static int saved[NKNOWN];
static pthread_mutex_t actions_mu = PTHREAD_MUTEX_INITIALIZER;

/* The signal handler: count, remember which, nothing else. */
static void on_caught(int signo) {
  int saved_errno = errno;
  atomic_store(&caught_last, signo);
  atomic_fetch_add(&caught_count, 1u);
  errno = saved_errno;
}

/* The index in known_signals of the name at stack index idx, or raise
** "bad argument #1 to 'lease.on_signal' (names[k] must be one of ...)". */
static int check_signal_name(lua_State *L, int idx, int k) {
  static const lb_callee c = {"on_signal", 0};
  lb_arg a = {&c, 1, "names[%d]", k};
  const char *s = lb_check_string(L, idx, &a, 0, NULL);
  int i;
  for (i = 0; i < NKNOWN; i++)
    if (strcmp(s, known_signals[i].name) == 0) return i;
  return lb_fail(L, idx, &a, "one of INT, TERM, HUP, QUIT, USR1, USR2");
}

/***
Catch signals: from now on each of them adds one to the count that
@{signals} returns, instead of its usual action (ending the process, or the
host's "interrupted!" for INT).  With `catch == false`, give each of them
back the action it had before it was first caught.  Catching is
process-wide: every thread sees the same count.
@function on_signal
@tparam {string,...} names signal names without "SIG": "INT", "TERM",
  "HUP", "QUIT", "USR1", "USR2"
@tparam[opt=true] boolean catch true to catch, false to restore
@treturn boolean true
@raise `bad argument #1 to 'lease.on_signal' (names[k] must be one of INT,
  TERM, ..., got a string)` for an unknown name or a non-string; `bad argument #1 ...
  (names must be a table ...)`; `lease.on_signal: <strerror>` when
  sigaction fails
*/
static int l_on_signal(lua_State *L) {
  static const lb_callee c = {"on_signal", 0};
  int want[NKNOWN] = {0};
  int catch = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
  int n, k, i, failed = 0;
  if (lua_type(L, 1) != LUA_TTABLE) lb_fail(L, 1, LB_ARG(&c, 1, "names"), "a table of signal names");
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TBOOLEAN)
    lb_fail(L, 2, LB_ARG(&c, 2, "catch"), "a boolean");
  n = lb_check_sequence(L, 1, LB_ARG(&c, 1, "names"), NKNOWN * 4);
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, 1, k);
    want[check_signal_name(L, -1, k)] = 1;
    lua_pop(L, 1);
  }
  pthread_mutex_lock(&actions_mu);
  for (i = 0; i < NKNOWN && !failed; i++) {
    if (!want[i]) continue;
    if (catch) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_caught;
      sa.sa_flags = SA_RESTART;
      sigemptyset(&sa.sa_mask);
      if (sigaction(known_signals[i].signo, &sa, saved[i] ? NULL : &saved_action[i]) != 0) failed = errno;
      else saved[i] = 1;
    } else if (saved[i]) {
      if (sigaction(known_signals[i].signo, &saved_action[i], NULL) != 0) failed = errno;
      else saved[i] = 0;
    }
  }
  pthread_mutex_unlock(&actions_mu);
  if (failed) return luaL_error(L, "lease.on_signal: %s", strerror(failed));
  lua_pushboolean(L, 1);
  return 1;
}

/***
How many signals @{on_signal} has caught since the process started, and the
last one.  A pure read of a process-wide counter: cheap to call between
jobs, from any thread.
@function signals
@treturn integer the count (only grows)
@treturn ?string the last signal's name ("TERM", ...), nil when none
@raise nothing
*/
static int l_signals(lua_State *L) {
  int last = atomic_load(&caught_last);
  int i;
  lua_pushinteger(L, (lua_Integer)atomic_load(&caught_count));
  for (i = 0; i < NKNOWN; i++) {
    if (known_signals[i].signo == last) {
      lua_pushstring(L, known_signals[i].name);
      return 2;
    }
  }
  lua_pushnil(L);
  return 2;
}

/***
This process's id (getpid), for owner names unique per process.
@function pid
@treturn integer the process id
@raise nothing
*/
static int l_pid(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)getpid());
  return 1;
}

/***
This machine's host name (gethostname), for owner names unique across
machines that share a database file system.
@function hostname
@treturn string the name ("localhost" when the system gives none)
@raise nothing
*/
static int l_hostname(lua_State *L) {
  char name[256];
  if (gethostname(name, sizeof name) != 0 || name[0] == '\0') {
    lua_pushliteral(L, "localhost");
    return 1;
  }
  name[sizeof name - 1] = '\0';   /* POSIX leaves truncation unterminated */
  lua_pushstring(L, name);
  return 1;
}

static const luaL_Reg process_funcs[] = {
  {"on_signal", l_on_signal},
  {"signals", l_signals},
  {"pid", l_pid},
  {"hostname", l_hostname},
  {NULL, NULL},
};

/* See lease_lua_int.h: add the functions above to the table on top. */
void lease_lua_process_register(lua_State *L) {
  luaL_setfuncs(L, process_funcs, 0);
}
