"""A composite policy's planner (`@seq.plan(every_s=…)`), run beside the per-step path.

Each robot (an environment: a worker's slot inline, a connection's episode slot when served) has
a thread of its own while its episode runs. The thread calls the policy's `plan` with the robot's
latest observation about every `every_s` seconds (the next call is due `every_s` after the last
one began; a slower planner is called again as soon as it returns) and only once a new observation
has come since its last call, so a robot that stopped acting costs no calls. Each act takes the
robot's latest plan as its `instruction`, the robot's own task until the first plan arrives: an
act never waits for the planner.

Every plan is reported once, with the first act after it arrived and its timing (seconds from the
episode's start to the call and to the reply), so the episode's trajectory can say which step each
plan arrived at; a plan replaced by a later one before any act came is marked `superseded` (infer
never saw it). A planner that raises fails the robot's next act with its traceback: an eval
never goes on silently without the plans it claims to use.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from seq.authoring.policy import PolicySpec


class PlannerError(RuntimeError):
    """The policy's `@seq.plan` raised or returned something other than text or None."""


@dataclass
class _Robot:
    generation: int
    started: float = field(default_factory=time.monotonic)
    obs: Any = None
    seen: int = 0  # observations given so far this episode
    planned: int = 0  # the observation count at the planner's last call
    acts: int = 0
    instruction: str | None = None  # the robot's own task
    current: str | None = None  # the plan in force
    arrived: list[dict[str, Any]] = field(default_factory=list)  # plans not yet used by an act
    error: str | None = None
    due: float = 0.0
    ended: bool = False
    idle: bool = False  # the thread waits for an observation (only then does an act wake it)


class Planning:
    """The planners of one policy instance, one thread per robot while its episode runs."""

    def __init__(self, instance: Any, spec: PolicySpec) -> None:
        self._plan = getattr(instance, spec.hooks["plan"])
        self.every_s = float(spec.plan_every_s or 0.0)
        self._keywords = spec.plan_keywords
        self._name = spec.name
        self._robots: dict[Hashable, _Robot] = {}
        self._condition = threading.Condition()
        self._generation = 0

    def begin(self, robot: Hashable) -> None:
        """A new episode for `robot`: forget its plans, start its planner thread."""
        with self._condition:
            old = self._robots.get(robot)
            if old is not None:
                old.ended = True
            self._generation += 1
            state = self._robots[robot] = _Robot(self._generation)
            self._condition.notify_all()
        threading.Thread(
            target=self._run, args=(robot, state), name=f"seq-plan-{self._name}", daemon=True
        ).start()

    def end(self, robot: Hashable) -> None:
        """`robot`'s episode ended: its thread stops (after a call in flight, whose reply is dropped)."""
        with self._condition:
            state = self._robots.pop(robot, None)
            if state is not None:
                state.ended = True
                self._condition.notify_all()

    def end_where(self, matches: Any) -> None:
        """End every robot whose key `matches(key)` (a served client's, when it disconnects)."""
        with self._condition:
            robots = [robot for robot in self._robots if matches(robot)]
        for robot in robots:
            self.end(robot)

    def use(
        self, robot: Hashable, obs: Any, instruction: str | None
    ) -> tuple[str | None, list[dict[str, Any]]]:
        """The instruction `robot`'s act passes to infer, and the plans this act is the first to use.
        An act of a robot with no episode begun (a client that sent none) begins one."""
        with self._condition:
            state = self._robots.get(robot)
        if state is None:
            self.begin(robot)
        with self._condition:
            state = self._robots[robot]
            if state.error is not None:
                raise PlannerError(f"the planner of {self._name} failed:\n{state.error}")
            state.obs, state.instruction = obs, instruction
            state.seen += 1
            arrived, state.arrived = state.arrived, []
            for plan in arrived:
                plan["act"] = state.acts
            for plan in arrived[:-1]:  # replaced by a later one before any act could use it
                plan["superseded"] = True
            state.acts += 1
            if state.idle:  # otherwise the thread is planning, or waits for its time: no wake-up per step
                self._condition.notify_all()
            return (state.current if state.current is not None else instruction), arrived

    def _run(self, robot: Hashable, state: _Robot) -> None:
        while True:
            with self._condition:
                while not state.ended and not (state.seen > state.planned and time.monotonic() >= state.due):
                    state.idle = state.seen <= state.planned
                    self._condition.wait(None if state.idle else state.due - time.monotonic())
                state.idle = False
                if state.ended:
                    return
                obs, state.planned = state.obs, state.seen
                given = {"instruction": state.instruction, "current": state.current}
            asked = time.monotonic()
            try:
                reply = self._plan(obs, **{name: given[name] for name in self._keywords})
                if reply is not None and not isinstance(reply, str):
                    raise TypeError(f"@seq.plan returned {type(reply).__name__}; expected text or None.")
                failure = None
            except Exception:
                reply, failure = None, traceback.format_exc()
            arrived = time.monotonic()
            with self._condition:
                if state.ended:
                    return
                state.due = asked + self.every_s
                if failure is not None:
                    state.error = failure
                    return
                if reply is not None and reply.strip():
                    state.current = reply.strip()
                    state.arrived.append(
                        {
                            "plan": state.current,
                            "asked_s": round(asked - state.started, 4),
                            "arrived_s": round(arrived - state.started, 4),
                        }
                    )


def planning_for(instance: Any, spec: PolicySpec) -> Planning | None:
    """The planners of a composite policy's instance; None for a policy without `@seq.plan`."""
    return Planning(instance, spec) if "plan" in spec.hooks else None
