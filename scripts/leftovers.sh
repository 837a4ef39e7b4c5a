#!/usr/bin/env bash
# Fails (exit 1) when a process started by a test is still running: every server a test starts
# carries CHOKEPOINT_TEST_SERVER in its environment (crates/testkit), inherited by its children.
# Lists them, kills them, and says which test server started each; the same for network
# namespaces the tests made. Run after the tests.
set -uo pipefail
found=0
for environ in /proc/[0-9]*/environ; do
  pid=${environ#/proc/}; pid=${pid%/environ}
  [ "$pid" = "$$" ] && continue
  mark=$({ tr '\0' '\n' < "$environ"; } 2>/dev/null | sed -n 's/^CHOKEPOINT_TEST_SERVER=//p' | head -n 1)
  [ -n "$mark" ] || continue
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
  [ "$state" = "Z" ] && continue
  echo "left running: pid $pid ($(cat "/proc/$pid/comm" 2>/dev/null)), started by test server $mark" >&2
  kill -KILL "$pid" 2>/dev/null
  found=$((found + 1))
done
# Network namespaces the tests made (tests/common/netns.rs) go with the test that made them.
if command -v ip >/dev/null 2>&1; then
  for netns in $(ip netns list 2>/dev/null | awk '/^cp-test-/ {print $1}'); do
    echo "left behind: network namespace $netns (deleted now)" >&2
    ip netns pids "$netns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    ip netns del "$netns" 2>/dev/null
    found=$((found + 1))
  done
fi
if [ "$found" -gt 0 ]; then
  echo "$found process(es) or namespace(s) started by the tests were still running (killed now)" >&2
  exit 1
fi
echo "no process started by the tests is left running"
