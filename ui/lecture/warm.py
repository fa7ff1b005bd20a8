"""A lecture's steps drawn once before the class sees them: starting a room (and the first page of a room a server
process serves, on a class server's other processes) warms every step of its plan in this process, in the background.

Each step's page is run once as the projector shows it after Reveal (its state, presentation mode, its focus; no
lecture keys, so no gate: every figure is drawn), in a session of this server that no browser holds
(ui/streamlit_private.run_page_without_a_browser): the page's imports, its models, the runs for its settings and every
figure's cached computation are made then, and each step's right answer is computed for its state. After that a Next
draws a step from warm caches, a Reveal draws its figures from them, and a follower's first load finds them made.

One step at a time, on one thread per process (a step's first draw took 1-5 s of CPU here: the lecturer's own pages
still answer meanwhile). A plan is warmed again after WARM_AGAIN_S (the caches may have let its entries go).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from attnviz.errors import AttnvizError
from attnviz.lecture import Plan, step_query
from ui.streamlit_private import pages_run_without_a_browser, run_page_without_a_browser

RUN_TIMEOUT_S = 180.0  # a step's first draw on a busy 2-core machine: well under this
WARM_AGAIN_S = 3600.0
log = logging.getLogger(__name__)


@dataclass
class Warming:
    """How far this process has warmed a plan."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.time)
    finished: float | None = None
    failed: list[int] = field(default_factory=list)  # the steps whose page did not finish in time
    seconds: dict[int, float] = field(default_factory=dict)  # step -> its page's first draw here, wall seconds


_lock = threading.Lock()
_plans: dict[str, Warming] = {}


def warming(plan_id: str) -> Warming | None:
    """How far this process has warmed the plan (None: never asked)."""
    with _lock:
        return _plans.get(plan_id)


def warm_plan(plan_id: str, plan: Plan, right_answer=None) -> bool:
    """Warm every step of the plan in this process, in the background, unless it is being warmed or was warmed in the
    last WARM_AGAIN_S; True when this call started it. right_answer(step): each question's right answer, computed
    for its state (the class panel's at Reveal), called on the warming thread."""
    if not pages_run_without_a_browser():  # AppTest, a bare script: nothing to warm for
        return False
    with _lock:
        known = _plans.get(plan_id)
        if known is not None and (known.finished is None or time.time() - known.finished < WARM_AGAIN_S):
            return False
        _plans[plan_id] = progress = Warming(len(plan.steps))
    threading.Thread(target=_warm, args=(plan, progress, right_answer), name=f"attnviz-warm-{plan_id}",
                     daemon=True).start()
    return True


def _warm(plan: Plan, progress: Warming, right_answer) -> None:
    begun = time.perf_counter()
    for number, step in enumerate(plan.steps, start=1):
        query = urlencode([(k, v) for k, v in step_query(step)])  # as the projector after Reveal, no lecture keys
        begun_step = time.perf_counter()
        try:
            if not run_page_without_a_browser(step.page, query, RUN_TIMEOUT_S):
                progress.failed.append(number)
            if right_answer is not None and step.answer is not None:
                right_answer(step)
        except AttnvizError:  # a step that cannot be computed says so on its own page
            pass
        except Exception:  # never let a warm-up take a server thread down
            log.exception("attnviz: warming step %d of %s", number, plan.title)
            progress.failed.append(number)
        progress.seconds[number] = time.perf_counter() - begun_step
        progress.done = number
    progress.finished = time.time()
    log.info("attnviz: warmed %d steps of %s in %.1f s%s", len(plan.steps), plan.title, time.perf_counter() - begun,
             f" (steps {progress.failed} did not finish)" if progress.failed else "")
