"""The states and kinds the record keeps, one `StrEnum` each.

Each member is the text stored in `seq.db` and sent over the wire, so a record written by an older
`seq` reads the same, and a member compares equal to its text (`EvalStatus.COMPLETED == "completed"`).
"""

from __future__ import annotations

from enum import StrEnum


class EvalStatus(StrEnum):
    """Where an eval stands."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    INCOMPLETE = "incomplete"  # ended with work items an infrastructure failure left unfinished
    INTERRUPTED = "interrupted"  # recorded as running, but no live runner holds its lease (killed)


class EpisodeStatus(StrEnum):
    """How an episode ended: it ran to its end, ran past its `timeout_s`, or raised."""

    OK = "ok"
    ERROR = "error"
    TIMED_OUT = "timed_out"


class Failure(StrEnum):
    """Whose failure an `error` episode is: the policy's or the benchmark's own (data, counted in the
    report), or the infrastructure's (the episode did not run to an end: its work item stays
    unfinished, and `--resume` runs it again)."""

    POLICY = "policy"
    BENCHMARK = "benchmark"
    INFRASTRUCTURE = "infrastructure"


class VersionKind(StrEnum):
    """What a registered version is (`seq deploy` registers all three)."""

    BENCHMARK = "benchmark"
    POLICY = "policy"
    ADAPTER = "adapter"


class PolicyProtocol(StrEnum):
    """How `seq` talks to a served policy: a `seq` server, an openpi policy server or a vla-eval
    model server."""

    SEQ = "seq"
    OPENPI = "openpi"
    VLA_EVAL = "vla-eval"


class ImageEncoding(StrEnum):
    """How images travel to a served policy."""

    RAW = "raw"
    PNG = "png"
    JPEG = "jpeg"


# The encodings each protocol's servers take: openpi's codec carries arrays only, and png is
# vla-eval's own default.
IMAGE_ENCODINGS: dict[PolicyProtocol, tuple[ImageEncoding, ...]] = {
    PolicyProtocol.SEQ: (ImageEncoding.RAW, ImageEncoding.JPEG),
    PolicyProtocol.OPENPI: (ImageEncoding.RAW,),
    PolicyProtocol.VLA_EVAL: (ImageEncoding.RAW, ImageEncoding.PNG, ImageEncoding.JPEG),
}

