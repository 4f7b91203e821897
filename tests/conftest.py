import os
import sys
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A deadline per example in CI, far above what an example needs (milliseconds to
# tenths of a second, as measured), so that it fails only an example that has gone
# pathological, and names it, where the run would otherwise hang. Wall-clock time:
# on this 2-core machine shared with other work, a 0.3 s example was seen to take
# 26 s (and 15 s of garbage collection besides), so it is generous, and the dev
# profile has none (a test's verdict must not depend on the machine's load).
CI_DEADLINE = timedelta(seconds=60)

# CI (`bash .ci/run` sets CI=true): the same examples on every run (derandomized),
# no example database, so nothing an earlier run left in .hypothesis/ can change the
# verdict, and no shrinking: a failure is reported as found, at once (shrinking on a
# loaded 2-core machine once ran for over 17 minutes). The failing example is
# printed, and the same CI=true run draws it again.
# Both profiles build on hypothesis' plain defaults: with CI set, hypothesis makes its
# own "ci" profile the default, which a profile registered here would otherwise inherit.
PLAIN = settings.get_profile("default")
settings.register_profile(
    "ci",
    parent=PLAIN,
    derandomize=True,
    database=None,
    deadline=CI_DEADLINE,
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target),
    report_multiple_bugs=False,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],  # generation time is load, too
)
# Everywhere else: hypothesis as it comes (new examples each run, the database that
# replays the last failures, shrinking), without a deadline.
settings.register_profile("dev", parent=PLAIN, deadline=None, print_blob=True)
# `--hypothesis-profile NAME` on pytest's command line still wins: the plugin loads it
# after this file.
settings.load_profile("ci" if os.environ.get("CI") else "dev")
