#!/bin/sh
# specs/model/check.sh: check the model of the job state machine
# (specs/model/lease.pml) with SPIN.  docs/model.md says what it checks.
#
#   check.sh            the model as the code writes it: SPIN searches every
#                       state and must find no violation (exit 0), else the
#                       counterexample is printed (exit 1).
#   check.sh --mutants  each broken model (lease.pml's MUT_* macros) must
#                       be caught, by the property that names its break:
#                       exit 0 when every one is, 1 when one is not.
#
# Environment: SPIN (default spin), CC (default cc), LEASE_MODEL_FLAGS
# (more -D flags for spin, as -DTMAX=5 -DFMAX=5 for a larger run).  pan is
# built and run in a temporary directory, removed at the end.  Needs spin
# (Debian package spin, in scripts/setup): missing, the check fails.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
SPIN=${SPIN:-spin}
CC=${CC:-cc}
FLAGS=${LEASE_MODEL_FLAGS:-}

if ! command -v "$SPIN" >/dev/null 2>&1; then
  echo "model: $SPIN not found (install the Debian package spin: scripts/setup)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lease-model.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp "$here/lease.pml" "$work/"

# run NAME DEFINES...: build pan for lease.pml with the -D flags given
# (compiled at $OPT) and search every state; its report goes to
# $work/NAME.out.  pan stops at the
# first violation (it writes lease.pml.trail).  -m: the depth of the
# search stack (the model's depth stays in the hundreds; a search cut
# short by it fails the check below); -w22: a hash table of 2^22 slots.
run() {
  name=$1
  shift
  rm -f "$work"/pan "$work"/pan.* "$work"/lease.pml.trail
  # shellcheck disable=SC2086
  (cd "$work" && "$SPIN" $FLAGS "$@" -a lease.pml >/dev/null &&
     "$CC" -w "$OPT" -DSAFETY -o pan pan.c &&
     ./pan -m100000 -w22 >"$name.out" 2>&1) || {
    echo "model: $name: spin or pan failed" >&2
    [ -f "$work/$name.out" ] && cat "$work/$name.out" >&2
    exit 1
  }
}

# complete NAME: the search of NAME covered every state (not cut short).
complete() {
  if grep -q 'max search depth too small' "$work/$1.out" ||
     ! grep -q '^Full statespace search' "$work/$1.out"; then
    echo "model: $1: the search did not cover every state" >&2
    cat "$work/$1.out" >&2
    exit 1
  fi
}

if [ "${1:-}" != "--mutants" ]; then
  OPT=-O1   # the full search: worth some optimisation
  run model
  complete model
  if ! grep -q 'errors: 0$' "$work/model.out"; then
    echo "model: the model of the code breaks a property; counterexample:" >&2
    grep 'assertion violated\|invalid end state' "$work/model.out" >&2 || true
    # shellcheck disable=SC2086
    (cd "$work" && "$SPIN" $FLAGS -t -p -g lease.pml) >&2 || true
    exit 1
  fi
  echo "model: no violation; $(grep -o '[0-9]* states, stored' "$work/model.out")"
  exit 0
fi

# Each mutant, and a piece of the text of the assertion that must catch it
# (pan prints the assertion it found violated, its macros expanded).
failed=0
OPT=-O0     # a broken model fails within a few hundred steps: compile fast
while read -r mutant expect property; do
  [ -n "$mutant" ] || continue
  run "$mutant" "-D$mutant"
  complete "$mutant"
  got=$(grep -o 'assertion violated.*' "$work/$mutant.out" || true)
  case $got in
    *"$expect"*)
      echo "model: $mutant caught by $property" ;;
    "")
      echo "model: $mutant NOT caught: SPIN found no violation" >&2
      failed=1 ;;
    *)
      echo "model: $mutant caught, but not by $property: $got" >&2
      failed=1 ;;
  esac
done <<'EOF'
MUT_CLAIM_LIVE wheld[ P1(one-live-lease)
MUT_RENEW_REVIVE ||(wu[ P5(no-write-after-expiry)
MUT_COMPLETE_NOFENCE f>=issued[j] P2(no-stale-fence-stored)
MUT_CLAIM_ENDED !(ended[j]) P4(ended-never-handed-out)
MUT_RELEASE_FENCE0 fence[j]>=seen[j] P3(fence-only-grows)
EOF
exit $failed
