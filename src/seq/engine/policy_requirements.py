"""What a policy declares, checked before an eval is stored: its card (`gpu=`, as a benchmark's:
refused on a machine without one unless `--allow-cpu`), its weights volume and its chat models
(configured, their key secrets set). The declarations themselves are recorded with the policy's
version (`seq policy ls`, the eval's manifest pins that version)."""

from __future__ import annotations

from seq.authoring.policy import PolicySpec
from seq.engine.worker_isolation import visible_gpus
from seq.errors import SeqInputError


def check_policy_declarations(spec: PolicySpec, allow_cpu: bool) -> None:
    declared = spec.declared
    gpu = declared.get("gpu")
    if gpu is not None and gpu.lower() != "cpu":
        cards = visible_gpus()
        matching = [card for card in cards if gpu.lower() == "any" or gpu.lower() in card.lower()]
        if not matching and not allow_cpu:
            found = ", ".join(cards) if cards else "none (nvidia-smi finds no card)"
            raise SeqInputError(
                f"policy {spec.name} declares gpu={gpu!r} and this machine has no such card (found: "
                f"{found}); pass --allow-cpu to run it on the CPU anyway."
            )
    if declared.get("weights"):
        from seq.isolation.volumes import current_volume

        name = declared["weights"]["volume"]
        try:
            current_volume(name)
        except SeqInputError as error:
            raise SeqInputError(f"policy {spec.name} declares weights={name!r}: {error}") from None
    if declared.get("models"):
        from seq.isolation.models import chat_endpoints
        from seq.isolation.secrets import secret_environment

        for endpoint in chat_endpoints(list(declared["models"]), spec.name).values():
            if endpoint.key_secret is not None:
                secret_environment([endpoint.key_secret])
