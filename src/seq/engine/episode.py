"""The one episode loop: reset → policy → env.step → check, until done, max_steps or timeout_s.

The env contract (gym-style, both APIs: `seq.authoring.env_contract`):
- `@seq.reset(self, seed, variant)` returns an env; `seq` then calls `env.reset(seed=seed)`.
- `env.step(action)` returns either API's tuple; the reward is summed into the `return` metric.
- `@seq.check(self, env)` runs after every step; the episode ends when it says `done`, when the
  env reports terminated / truncated / done, at the condition's `max_steps` (else the
  benchmark's), or past its `timeout_s` (status `timed_out`). The metrics are the last check's.
- `seq` never closes an env during an eval (a benchmark may cache one per task and return it
  again); each distinct env is closed when the worker exits.

What the policy returns must be an action: numbers, as many per action as the env's
`action_space` holds (where it declares a shape); anything else (None, a string, the wrong size)
ends the episode as the policy's error, naming it. A `step` that returns other than 4 or 5 values
is the env's error, naming it (`ContractError`). An action holding NaN or an infinity is sent
as it is, and counted: the episode's `nan_actions` metric is the number of steps that sent one,
either kind (absent when none did). A batched env (`seq.engine.batch`: one world of several that
step together) is stepped by staging its action and yielding a `BatchStep` to whoever drives the
episode. A composite policy's episode counts the plans that reached its `infer` (`plans`; 0 says
its planner never answered). Whose failure an error is (`EpisodeResult.failure`) is decided by
`seq.engine.failures`.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

from seq.authoring.begin import EpisodeStart
from seq.authoring.benchmark import Benchmark, BenchmarkSpec, Step
from seq.authoring.env_contract import check_metrics, reset_env, step_outcome
from seq.authoring.seeding import act_seeds
from seq.engine.batch import BatchStep, batch_of, release
from seq.engine.contract import action_size, checked_chunk, policy_name
from seq.engine.failures import classify, describe
from seq.engine.observer import EpisodeObserver, Finishing
from seq.record.episode import BENCHMARK, ERROR, POLICY, TIMED_OUT, EpisodeResult
from seq.record.work import WorkItem
from seq.serving.inline import ActRequest, PolicyHandle

NAN_ACTIONS = "nan_actions"
PLANS = "plans"  # a composite policy's: the plans that reached infer in the episode


class EpisodeRunner:
    """Runs work items of one benchmark instance against one policy handle."""

    def __init__(
        self,
        benchmark: Benchmark,
        spec: BenchmarkSpec,
        policy: PolicyHandle,
        steps_per_query: int | None = None,
        on_env: Callable[[Any], None] | None = None,
        observers: Sequence[EpisodeObserver] = (),
        on_finishing: Callable[[Finishing], None] | None = None,
    ) -> None:
        """`on_finishing` takes an ended episode whose observers are still writing files (the
        episode then returns its result as it is, and the caller sends it once `finish`ed); without
        it, the episode waits for them."""
        self.benchmark = benchmark
        self.spec = spec
        self.policy = policy
        self.steps_per_query = steps_per_query
        self._check = getattr(benchmark, spec.hooks["check"])
        self._on_env = on_env
        self.observers = list(observers)
        self._on_finishing = on_finishing
        # each task's position among its suite's tasks, in the order the benchmark declares them
        self._task_index = {
            (suite, task): index
            for suite, conditions in spec.suites.items()
            for index, task in enumerate(dict.fromkeys(c.task for c in conditions))
        }

    def _notify(self, watching: list[EpisodeObserver], errors: list[str], method: str, *args: Any) -> None:
        for observer in list(watching):
            try:
                getattr(observer, method)(*args)
            except Exception:
                watching.remove(observer)
                errors.append(f"{type(observer).__name__}.{method}: {traceback.format_exc()}")

    def _plans_expected(self) -> bool:
        """The policy plans (`@seq.plan`), so an episode with no plan says so (`plans` = 0)."""
        return bool(getattr(self.policy, "plans", False))

    def _plans(self, watching: list[EpisodeObserver], errors: list[str], slot: int, step: int) -> int:
        """The plans the act just answered was the first to use (a composite policy's:
        `seq.serving.planning`), shown to the observers that record them (`plan(step, plans)`);
        how many of them reached the policy (not superseded)."""
        take = getattr(self.policy, "take_plans", None)
        plans = take(slot) if take is not None else None
        if not plans:
            return 0
        if watching:
            recording = [observer for observer in watching if hasattr(observer, "plan")]
            self._notify(recording, errors, "plan", step, plans)
            watching[:] = [o for o in watching if o in recording or not hasattr(o, "plan")]
        return sum(1 for plan in plans if not plan.get("superseded"))

    def run(self, item: WorkItem) -> EpisodeResult:
        """Run one episode to its end, asking the policy for each chunk as it is needed."""
        episode = self.episode(item)
        send, act = episode.send, self.policy.act
        reply: np.ndarray | BaseException | None = None
        while True:
            try:
                thrown = isinstance(reply, BaseException)
                request = episode.throw(reply) if thrown else send(reply)  # type: ignore[arg-type]
            except StopIteration as stop:
                return stop.value
            try:
                if isinstance(request, BatchStep):  # one episode at a time: its batch steps now
                    request.batch.step()
                    reply = None
                    continue
                reply = act(request.obs, seed=request.seed, instruction=request.instruction)
            except Exception as error:
                reply = error

    def episode(self, item: WorkItem, slot: int = 0) -> Generator[ActRequest | BatchStep, Any, EpisodeResult]:
        """The episode as a generator: it yields an `ActRequest` whenever it needs the policy, is
        sent the chunk (or thrown what the act raised, recorded as the episode's error), yields a
        `BatchStep` when a batched env's action is staged (sent None once the batch stepped), and
        returns the `EpisodeResult`. `run` drives one; a worker with `envs_per_worker > 1` drives
        several side by side (`seq.engine.lockstep`), asking the policy for their chunks at once.

        The flow, each phase in the code of the side named (an exception there is its failure):
        1. reset (benchmark): `@seq.reset` gives the env, `env.reset(seed=)` the first observation;
           observers begin.
        2. begin (policy): the policy is told an episode begins (its action space, task, seed).
        3. act (policy), when the last chunk is used up: the policy is asked for the next chunk
           of actions, which is checked to be actions.
        4. step (benchmark): the env takes one action (a batched env's world steps with others').
        5. check (benchmark): `@seq.check` says whether the episode is done, with its metrics;
           it also ends when the env says so, at `max_steps`, or past `timeout_s`: back to 3.
        6. end: a batched env is released, the result gets its metrics, the policy
           (`end_episode`) and the observers are told how it ended."""
        condition = item.condition
        result = item.result()
        max_steps = condition.max_steps or self.spec.max_steps
        deadline = None if condition.timeout_s is None else condition.timeout_s
        start, cpu_start = time.perf_counter(), time.process_time()
        total_reward = 0.0
        metrics: dict[str, float] = {}
        watching, observer_errors = list(self.observers), list[str]()
        began = False
        blamed = BENCHMARK  # whose code had the turn when an exception left it: its failure
        nan_steps = plans = 0
        steps = queries = 0  # the result's, kept here while the episode runs
        planning = False  # a composite policy: its acts may carry plans (asked once, in the try:
        # a served policy's answer needs its server)
        env: Any = None
        batch: Any = None

        def built(made: Any) -> None:  # kept before its reset: a batched env is released after all
            nonlocal env, batch
            env, batch = made, batch_of(made)
            if self._on_env is not None:
                self._on_env(made)

        try:  # 1. reset
            _, obs, _ = reset_env(self.benchmark, self.spec, condition, built)
            if watching:
                self._notify(watching, observer_errors, "begin", item, env, obs)
            instruction = self.benchmark.instruction(condition)
            suite = condition.suite or self.spec.default_suite
            task_index = self._task_index.get((suite, condition.task))
            started = EpisodeStart(condition.task, suite, instruction, condition.seed, task_index)
            space = getattr(env, "action_space", None)
            size = action_size(space)
            seeds = act_seeds(condition.seed, item.trial)
            try:  # 2. begin: the policy's turn (a try costs nothing until something raises)
                self.policy.begin_episode(space, slot=slot, episode=started)
            except Exception:
                blamed = POLICY
                raise
            began = True
            chunk = np.empty((0, 0))
            nan_actions: np.ndarray | None = None
            planning = self._plans_expected()
            check, per_query = self._check, self.steps_per_query
            position = used = 0
            ended_by = "max_steps"
            while steps < max_steps:
                if deadline is not None and time.perf_counter() - start > deadline:
                    result.status, ended_by = TIMED_OUT, "timeout"
                    break
                if position >= used:
                    seed = seeds(queries)
                    try:  # 3. act: the policy's turn
                        reply = yield ActRequest(obs, seed, instruction, slot)
                        chunk, nan_actions = checked_chunk(reply, space, size, self.policy)
                        if planning:
                            plans += self._plans(watching, observer_errors, slot, steps)
                        used = len(chunk) if per_query is None else per_query
                        if used > len(chunk):
                            raise ValueError(
                                f"steps_per_query={used} is longer than the chunk of {len(chunk)} "
                                f"actions {policy_name(self.policy)} returned."
                            )
                    except Exception:
                        blamed = POLICY
                        raise
                    position = 0
                    queries += 1
                action = chunk[position]  # 4. step
                if nan_actions is not None and nan_actions[position]:
                    nan_steps += 1
                if batch is None:
                    output = env.step(action)
                else:  # its world steps with the others: whoever drives the episode steps them
                    env.stage(action)
                    yield BatchStep(batch)
                    output = env.outcome()
                position += 1
                steps += 1
                if type(output) is tuple and len(output) == 5 and type(output[1]) is float:
                    # gymnasium's return, the usual case, read here: a call a step costs ~10%
                    obs, reward, env_ended = output[0], output[1], output[2] or output[3]
                else:  # the other API or another reward type, read by the contract
                    obs, reward, terminated, truncated, _ = step_outcome(output, env, self.spec.name)
                    env_ended = terminated or truncated
                total_reward += reward
                if watching:
                    self._notify(watching, observer_errors, "step", env, obs, action, reward, seed)
                step = check(env)  # 5. check
                metrics = {} if type(step) is Step and step.metrics == {} else check_metrics(step)
                if step.done:
                    ended_by = "check"
                    break
                if env_ended:
                    ended_by = "env"
                    break
            result.ended_by = ended_by
        except Exception as error:
            # the policy's or the benchmark's own failure, or the infrastructure's (a served policy
            # gone, a module that does not import): `seq.engine.failures`
            result.failure, result.ended_by = classify(error, blamed)
            result.status, result.error = ERROR, describe(error, result.failure)
        result.steps, result.queries = steps, queries  # 6. end
        if batch is not None:
            try:
                release(env)
            except Exception as error:
                if result.status != ERROR:
                    result.failure, result.ended_by = classify(error, BENCHMARK)
                    result.status, result.error = ERROR, describe(error, result.failure)
        result.duration_s = time.perf_counter() - start
        result.cpu_s = time.process_time() - cpu_start
        if result.status != ERROR:
            result.metrics = {
                **metrics,
                **({NAN_ACTIONS: float(nan_steps)} if nan_steps else {}),
                **({PLANS: float(plans)} if plans or planning else {}),
                "steps": float(result.steps),
                "return": total_reward,
                "duration_s": result.duration_s,
            }
        end_episode = getattr(self.policy, "end_episode", None)
        if began and end_episode is not None:  # a vla-eval server is told how the episode ended
            try:  # after the result: nothing may cost the episodes beside it their worker
                end_episode(result, slot)
            except Exception:
                observer_errors.append(f"{type(self.policy).__name__}.end_episode: {traceback.format_exc()}")
        finishing = Finishing(result, observer_errors)
        for observer in self.observers:
            try:
                finishing.add(observer, observer.end(result))
            except Exception:
                observer_errors.append(f"{type(observer).__name__}.end: {traceback.format_exc()}")
        if self._on_finishing is not None and not finishing.done():
            self._on_finishing(finishing)  # the caller sends the result once the files are written
            return result
        return finishing.finish()
