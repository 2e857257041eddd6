# Sourced by the viewer's CTest scripts: re-runs the calling script once under xvfb-run
# (one X server for all its screenshots; Mesa's software OpenGL), then exits with the status
# the inner run recorded in $out/status. xvfb-run's own exit code is not trusted: it can
# fail while cleaning up its temporary directory after the work succeeded.
#
# The caller sets `out` (its output folder) and passes "$@"; the inner run sees
# HF_VIEWER_XVFB=1 and goes on with the checks.
if [ "${HF_VIEWER_XVFB:-}" != 1 ]; then
  if ! command -v xvfb-run >/dev/null 2>&1; then
    echo "SKIP: xvfb-run is not installed (apt-get install xvfb xauth): cannot render headless"
    exit 77
  fi
  rm -rf "$out"
  mkdir -p "$out"
  HF_VIEWER_XVFB=1 LIBGL_ALWAYS_SOFTWARE=1 \
    xvfb-run -a -s "-screen 0 1920x1200x24" sh "$0" "$@"
  rc=$?
  if [ ! -f "$out/status" ]; then
    echo "FAIL: xvfb-run exited with $rc before the checks finished"
    exit 1
  fi
  exit "$(cat "$out/status")"
fi
