"""`memory=` as a benchmark declares it: a bare number is GiB for all workers together; texts name a unit."""

from __future__ import annotations

import pytest

import seq
from seq.authoring.benchmark import spec_of
from seq.authoring.resources import memory_text


def _declare(**resources):
    @seq.benchmark(name="sized", conditions=[seq.Condition("a")], **resources)
    class Sized(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return None

        @seq.check
        def check(self, env):
            return seq.Step(done=True)

    return spec_of(Sized).declared


def test_seed_000s_cpu_16_memory_32_is_32_gib_for_the_16_workers():
    declared = _declare(gpu="cpu", cpu=16, memory=32)
    assert declared["memory"] == 32 * 2**30 and declared["cpu"] == 16
    assert memory_text(declared["memory"] // declared["cpu"]) == "2 GiB"


@pytest.mark.parametrize(
    ("memory", "mib"),
    [(0.5, 512), (2, 2048), ("512MiB", 512), ("2GiB", 2048), ("2G", 2048), ("4 GB", 4096), ("300M", 300)],
)
def test_numbers_are_gib_and_texts_keep_their_unit(memory, mib):
    assert _declare(memory=memory)["memory"] == mib * 2**20


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        ("512", "memory='512' has no unit; write 512 (a number is GiB) or '512MiB'"),
        (0.01, "under 64 MiB"),
        ("lots", "memory='lots' is not a size"),
        (True, "memory=True is not a size"),
        (float("nan"), "memory=nan is not a size"),
        (1e300, "memory=1e+300 is not a size any machine has"),
        ("9" * 400 + "GiB", "is not a size any machine has"),
    ],
)
def test_what_is_not_a_size_is_refused_in_one_sentence(memory, said):
    with pytest.raises(seq.SeqInputError, match="@seq.benchmark on Sized") as refused:
        _declare(memory=memory)
    assert said in str(refused.value)


@pytest.mark.parametrize(
    ("env_memory", "said"),
    [
        (0, "env_memory=0 is under one byte"),
        (-1, "env_memory=-1 is under one byte"),
        (True, "env_memory=True is not a size"),
        (1e300, "env_memory=1e+300 is not a size any machine has"),
    ],
)
def test_an_env_memory_that_is_not_a_size_is_refused_in_one_sentence(env_memory, said):
    with pytest.raises(seq.SeqInputError, match="@seq.benchmark on Sized") as refused:
        _declare(env_memory=env_memory)
    assert said in str(refused.value)


def test_an_env_memory_keeps_its_unit_and_may_be_small():
    assert _declare(env_memory="1KiB")["env_memory"] == 1024
    assert _declare(env_memory=1.5)["env_memory"] == 3 * 2**29
