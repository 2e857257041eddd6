#!/usr/bin/env bash
# The machine probe's file follows the kernel cache's rules (issue 23, item 4): it is an
# entry of the disk cache, opened with O_NOFOLLOW | O_NONBLOCK, used only when it is a
# regular file owned by us with a valid checksum, replaced atomically, and never written
# in a directory the kernel cache refused. Usage: cli_probe.sh HOTFUSE_RUN REPO_ROOT
set -u
run=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
ex="$root/traces/graphs/abc.json"
fail() {
  echo "FAIL: $*" >&2
  cat "$tmp/out" "$tmp/err" >&2
  failures=$((failures + 1))
}
probe() {  # probe CACHE_DIR: the run's "machine:" line into $tmp/out, exit code checked
  HOTFUSE_CACHE_DIR=$1 timeout 120 "$run" "$ex" --fusion off --iters 1 --warmup 0 \
    --backend cpu >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "hotfuse-run exited $rc with HOTFUSE_CACHE_DIR=$1"
}

# A missing cache directory is created 0700 whatever the umask.
(umask 0 && probe "$tmp/cache")
mode=$(stat -c %a "$tmp/cache")
[ "$mode" = 700 ] || fail "the cache directory was created with mode $mode, not 700"
grep -q "(probed)" "$tmp/out" || fail "the first run did not probe"
entry=$(ls "$tmp/cache"/*.hfc)
[ "$(echo "$entry" | wc -l)" = 1 ] || fail "expected one entry, the probe's: $entry"
mode=$(stat -c %a "$entry")
[ "$mode" = 600 ] || fail "the probe's entry has mode $mode, not 600"
probe "$tmp/cache"
grep -qF "(cached in $entry)" "$tmp/out" || fail "the second run did not use the cached probe"
cp "$entry" "$tmp/valid.hfc"

# A FIFO at the entry's name: no hang (O_NONBLOCK, then not a regular file), probed again,
# the FIFO replaced by a real entry.
rm "$entry" && mkfifo -m 600 "$entry"
probe "$tmp/cache"
grep -q "(probed)" "$tmp/out" || fail "a FIFO at the probe's entry was not refused"
[ -f "$entry" ] && [ ! -p "$entry" ] || fail "the FIFO was not replaced by an entry"

# A symlink at the entry's name to a valid entry elsewhere (another user's, say): not
# followed, neither read nor written through.
rm "$entry" && cp "$tmp/valid.hfc" "$tmp/elsewhere.hfc" && ln -s "$tmp/elsewhere.hfc" "$entry"
probe "$tmp/cache"
grep -q "(probed)" "$tmp/out" || fail "a symlinked probe entry was followed"
[ ! -L "$entry" ] || fail "the symlink was left in place of the entry"
cmp -s "$tmp/valid.hfc" "$tmp/elsewhere.hfc" || fail "the symlink's target was written"

# A planted entry owned by someone else (root can chown; otherwise skipped) is not trusted.
cp "$tmp/valid.hfc" "$entry"
if chown 12345 "$entry" 2>/dev/null; then
  probe "$tmp/cache"
  grep -q "(probed)" "$tmp/out" || fail "a probe entry owned by another user was trusted"
fi

# A cache directory others can write is refused with one line; the probe writes nothing there.
mkdir -m 0777 "$tmp/shared" && chmod 0777 "$tmp/shared"
probe "$tmp/shared"
grep -q "(probed)" "$tmp/out" || fail "a refused cache directory was used for the probe"
[ -z "$(ls -A "$tmp/shared")" ] || fail "the probe wrote into a refused cache directory: $(ls -A "$tmp/shared")"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "the probe's file follows the cache's rules"
