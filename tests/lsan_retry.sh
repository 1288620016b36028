#!/bin/sh
# Run a sanitizer build's test command; when LeakSanitizer's own tracer
# crashes at exit after every test passed (a known intermittent fault of
# its stop-the-world step, not a leak report), run it once more. Any other
# failure, or the same crash twice, is the command's failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" > "$log" 2>&1
status=$?
cat "$log"
if [ "$status" -ne 0 ] && grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
   grep -q "^[0-9]* passed, 0 failed" "$log"; then
    echo "lsan_retry: LeakSanitizer's tracer crashed after the tests passed; running them once more"
    "$@"
    exit $?
fi
exit "$status"
