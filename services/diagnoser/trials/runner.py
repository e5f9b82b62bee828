"""Run trials: each (tree, window) pair evaluated once (results cached by content digest), independent trials in
parallel up to ``parallel``, and no more than ``budget`` evaluations in all; a trial past the budget is
reported as not run, never silently dropped. Every executed or cached trial is recorded for the report."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from pathlib import Path

from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.workspace.command_lanes import preparing_threads
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.evaluation_cache import EvaluationCache, content_digests
from libs.workspace.model_evaluation import MetricSource, evaluate_model
from libs.workspace.runner import CommandNotAllowed, CommandTimedOut
from services.diagnoser.trials.scratch_paths import without_scratch_paths
from services.diagnoser.trials.trial import BUDGET_SPENT, Trial, TrialOutcome

EVALUATION_ERRORS = (WorkspaceCommandFailed, CommandTimedOut, CommandNotAllowed, OSError, ValueError)
FAILURE_CHARS = 500


@dataclass
class TrialRunner:
    workspace: WorkspacePolicy
    gate: GatePolicy
    budget: int
    parallel: int = 1
    scrub: tuple[Path, ...] = ()
    """Folders whose paths are taken out of failure texts (scratch folders), so reports are stable."""
    cache: EvaluationCache | None = None
    """Evaluations measured before by any service of the home: read, not run again. A read counts as an evaluation
    of this diagnosis and is reported as one (its value is what the sandbox measured): the report is the same
    whether the sandbox ran it now or before."""
    records: list[TrialOutcome] = field(default_factory=list)
    _cache: dict[str, TrialOutcome] = field(default_factory=dict)
    _executed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def metric_source(self) -> MetricSource:
        return "referee" if self.workspace.referee else "self_reported"

    @property
    def evaluations(self) -> int:
        """Evaluations actually executed (cache hits and trials past the budget are not counted)."""
        return self._executed

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self._executed)

    def run(self, trials: Sequence[Trial]) -> list[TrialOutcome]:
        """Outcomes in the order of ``trials``."""
        # the shared evaluation cache's digests, so the keys agree with every service's
        digests = content_digests([(trial.tree, trial.window) for trial in trials])
        planned: dict[str, Trial] = {}
        for trial, digest in zip(trials, digests, strict=True):
            if digest not in self._cache and digest not in planned and len(planned) < self.remaining:
                planned[digest] = trial
        if planned:
            workers = preparing_threads(len(planned), self.parallel)
            # each trial runs in a copy of this thread's context, so its spans and log lines keep the incident's
            contexts = [copy_context() for _ in planned]
            with ThreadPoolExecutor(max_workers=workers) as pool:
                done = list(
                    pool.map(lambda item, context: context.run(self._execute, *item), planned.items(), contexts)
                )
            for outcome in done:
                self._cache[outcome.content_digest] = outcome
        outcomes = []
        for trial, digest in zip(trials, digests, strict=True):
            known = self._cache.get(digest)
            if known is None:
                outcome = TrialOutcome(trial.name, None, BUDGET_SPENT, None, 0.0, False, digest)
            elif digest in planned and planned[digest] is trial:
                outcome = known
            else:
                outcome = TrialOutcome(trial.name, known.metric, known.failure, known.scored, 0.0, True, digest)
            self.records.append(outcome)
            outcomes.append(outcome)
        return outcomes

    def run_one(self, trial: Trial) -> TrialOutcome:
        return self.run([trial])[0]

    def _execute(self, digest: str, trial: Trial) -> TrialOutcome:
        """One trial's evaluation, measured now or read from the shared cache: the same outcome either way (the
        diagnosis must not depend on what ran before it), so both count as this diagnosis's evaluations."""
        with self._lock:
            self._executed += 1
        started = time.monotonic()
        try:
            if self.cache is not None:
                lookup = self.cache.evaluate(trial.tree, trial.window, self.workspace, self.gate, content=digest)
                evaluation = lookup.evaluation
            else:
                evaluation = evaluate_model(trial.tree, trial.window, self.workspace, self.gate)
        except EVALUATION_ERRORS as error:
            return TrialOutcome(trial.name, None, self._failure_text(error), None, _since(started), False, digest)
        metric = evaluation.metrics.get(self.gate.metric)
        failure = None if metric is not None else f"the evaluation printed no {self.gate.metric!r} metric"
        return TrialOutcome(trial.name, metric, failure, evaluation.scored, _since(started), False, digest)

    def _failure_text(self, error: BaseException) -> str:
        """The end of the error, without scratch paths (they differ from run to run, the report must not)."""
        text = str(error)
        for folder in self.scrub:
            text = text.replace(str(folder), "<scratch>")
        text = without_scratch_paths(text)
        return " ".join(text.split())[-FAILURE_CHARS:]


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
