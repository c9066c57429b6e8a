"""`RemotePolicy`: a served policy, driven by the episode loop exactly like an inline one.

It implements `PolicyHandle` (`begin_episode`, `act`, `act_many`): the act's seed and instruction
travel with the observation, and the server calls the policy's infer with them, so a served eval
and an inline eval of the same deterministic policy give identical rows. Chunks and
`steps_per_query` stay in the episode loop. The client is synchronous (it runs in the worker's
loop): one request, one reply. A worker running several episodes side by side sends their acts as
one `act_batch` message, each tagged with its episode's slot: one round trip for all of them.

`connect(url, protocol=…)` builds the handle for a `seq`, openpi or vla-eval server.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from seq.authoring.begin import EpisodeStart
from seq.authoring.params import Parameter, Range
from seq.errors import SeqInputError
from seq.record.states import IMAGE_ENCODINGS, ImageEncoding, PolicyProtocol
from seq.serving import codec
from seq.serving.codec import SUBPROTOCOL
from seq.serving.inline import ActRequest, PolicyHandle
from seq.serving.remote_errors import MessageTooLarge, RemotePolicyError
from seq.serving.spaces import describe_space
from seq.serving.transport import MAX_FRAME_BYTES, BaseClient, SyncSocket


class RemotePolicy(BaseClient):
    """A policy behind `seq policy serve` / `seq.serve`, as a `PolicyHandle`.

    `parameters` are the eval's values for the policy's declared parameters (sent at each episode
    start; None keeps the server's). Images travel raw unless `image_encoding="jpeg"`. `token`
    (default: `$SEQ_SERVER_TOKEN`) is presented to a server that requires one. Nothing connects
    until `fetch_metadata()` or `begin_episode()`; the properties `parameters` (those the policy
    declares), `plans` and `label` read the server's hello that they fetched.
    """

    subprotocols = (SUBPROTOCOL,)

    def __init__(
        self,
        url: str,
        *,
        parameters: dict[str, Any] | None = None,
        image_encoding: str = "raw",
        jpeg_quality: int = 90,
        timeout_s: float | None = 120.0,
        retries: int = 5,
        backoff_s: float = 0.25,
        open_timeout_s: float = 10.0,
        token: str | None = None,
        max_frame_bytes: int | None = MAX_FRAME_BYTES,
    ) -> None:
        if image_encoding not in IMAGE_ENCODINGS[PolicyProtocol.SEQ]:
            raise SeqInputError(f"image_encoding must be 'raw' or 'jpeg', got {image_encoding!r}.")
        super().__init__(
            url,
            timeout_s=timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            open_timeout_s=open_timeout_s,
            token=token,
            max_frame_bytes=max_frame_bytes,
        )
        self.parameters_sent = dict(parameters) if parameters is not None else None
        self._encoder = codec.Encoder(jpeg_quality if image_encoding == ImageEncoding.JPEG else None)
        self._id = 0
        self.max_message_bytes: int | None = None
        self.act_batch = False
        self._plans: dict[int, list[dict[str, Any]]] = {}  # a composite's plans, by episode slot

    def _handshake(self, sock: SyncSocket) -> dict:
        try:
            frame = sock.recv(self.open_timeout_s)
        except TimeoutError:
            raise RemotePolicyError(
                f"the server at {self.url} sent no hello within {self.open_timeout_s} s; it is not a seq "
                "policy server (for a vla-eval model server use protocol='vla-eval').",
                kind="protocol",
            ) from None
        message = codec.unpack(frame) if isinstance(frame, bytes) else None
        payload = message.get("payload") if isinstance(message, dict) else None
        if (
            sock.subprotocol != SUBPROTOCOL
            or not isinstance(payload, dict)
            or payload.get("protocol") != PolicyProtocol.SEQ
        ):
            raise RemotePolicyError(
                f"the server at {self.url} is not a seq policy server (for an openpi server use "
                "protocol='openpi', for a vla-eval one protocol='vla-eval').",
                kind="protocol",
            )
        capabilities = payload.get("capabilities", {})
        self.max_message_bytes = capabilities.get("max_message_bytes")
        self.act_batch = bool(capabilities.get("act_batch"))  # an older seq server answers one act at a time
        return payload

    def fetch_metadata(self) -> dict[str, Any]:
        """Connect (with the retries; `ServerUnreachable` after them) and return the server's
        hello, which `parameters`, `plans` and `label` then read. `begin_episode` reads it too."""
        self.connect()
        return self.metadata

    def _hello(self, what: str) -> dict[str, Any]:
        if not self.metadata:
            raise RuntimeError(
                f"RemotePolicy.{what}: no hello from {self.url} yet; call fetch_metadata() (or "
                "begin_episode()) first, which connects."
            )
        return self.metadata

    @property
    def parameters(self) -> dict[str, Parameter]:
        """The served policy's declared parameters, from its hello (`fetch_metadata`)."""
        return parameters_of(self._hello("parameters"))

    @property
    def plans(self) -> bool:
        """The served policy is a composite one: its hello (`fetch_metadata`) says how often it
        plans."""
        return self._hello("plans").get("plan_every_s") is not None

    @property
    def label(self) -> str:
        """The served policy's `NAME@vN`, from its hello (`fetch_metadata`)."""
        return str(self._hello("label").get("policy", {}).get("label", self.url))

    def _request(self, message: dict[str, Any], what: str) -> dict[str, Any]:
        self._id += 1
        message["id"] = self._id
        frame = self._encoder.pack(message)
        if self.max_message_bytes is not None and len(frame) > self.max_message_bytes:
            raise MessageTooLarge(
                f"{what} is a frame of {len(frame)} bytes, over the server's limit of "
                f"{self.max_message_bytes} (serve with a larger max_message_bytes, or send images as JPEG)."
            )
        reply = self._exchange(frame, what)
        answer = codec.unpack(reply) if isinstance(reply, bytes) else None
        if not isinstance(answer, dict) or answer.get("id") != self._id:
            self._drop()
            raise RemotePolicyError(f"the server at {self.url} answered {what} out of turn.", kind="protocol")
        if answer.get("type") == "error":
            raise self._refusal(answer, what)
        return answer

    def _refusal(self, answer: dict[str, Any], what: str) -> RemotePolicyError:
        """The error an `error` reply stands for."""
        kind, error, trace = answer.get("kind", "policy"), answer.get("error"), answer.get("traceback")
        if kind == "policy":
            label = self.metadata.get("policy", {}).get("label", self.url)
            text = f"the served policy {label} raised {error}"
            if trace:
                text += f"\n\nTraceback on the policy server:\n{trace}"
        else:
            text = f"the policy server at {self.url} refused {what}: {error}"
        return RemotePolicyError(text, kind=kind, remote_traceback=trace)

    def begin_episode(self, action_space: Any, slot: int = 0, episode: EpisodeStart | None = None) -> None:
        """Connect (again, with backoff, if the last episode lost the server), then send the
        episode's action space, parameters and what `@seq.begin` is told (for its `slot`, when a
        worker runs several)."""
        self.connect()
        message = {
            "type": "episode_start",
            "action_space": describe_space(action_space),
            "params": self.parameters_sent,
            **(episode.to_dict() if episode is not None else {}),
        }
        if slot:
            message["episode"] = slot
        self._request(message, "an episode's start")

    def take_plans(self, slot: int = 0) -> list[dict[str, Any]]:
        """The plans `slot`'s last act was the first to use (a composite policy's)."""
        return self._plans.pop(slot, [])

    def _keep_plans(self, slot: int, answer: dict[str, Any]) -> None:
        plans = answer.get("plans")
        self._plans[slot] = [p for p in plans if isinstance(p, dict)] if isinstance(plans, list) else []

    def act(self, obs: Any, *, seed: int, instruction: str | None) -> np.ndarray:
        answer = self._request(
            {"type": "act", "obs": obs, "seed": seed, "instruction": instruction}, "an act"
        )
        self._keep_plans(0, answer)
        return np.asarray(answer["actions"])  # decoded arrays are the receiver's own, writable

    def act_many(self, requests: Sequence[ActRequest]) -> list[np.ndarray | Exception]:
        """The chunks of several episodes' acts, asked in one message (one by one from an older
        server); a policy error fails only its own request."""
        if len(requests) == 1 and requests[0].slot == 0:
            request = requests[0]
            try:
                return [self.act(request.obs, seed=request.seed, instruction=request.instruction)]
            except RemotePolicyError as error:  # the policy raised: that episode's error
                return [error]
        if not self.act_batch:
            raise RemotePolicyError(
                f"the policy server at {self.url} answers one act per message; run with envs_per_worker=1 "
                "or serve the policy with this version of seq.",
                kind="protocol",
            )
        acts = [
            {"episode": r.slot, "obs": r.obs, "seed": r.seed, "instruction": r.instruction} for r in requests
        ]
        answer = self._request({"type": "act_batch", "acts": acts}, f"a batch of {len(acts)} acts")
        results = answer.get("results")
        if answer.get("type") != "actions" or not isinstance(results, list) or len(results) != len(acts):
            self._drop()
            raise RemotePolicyError(
                f"the server at {self.url} answered a batch of {len(acts)} acts with something else.",
                kind="protocol",
            )
        for request, result in zip(requests, results, strict=True):
            if isinstance(result, dict):
                self._keep_plans(request.slot, result)
        return [
            np.asarray(result["actions"]) if "actions" in result else self._refusal(result, "an act")
            for result in results
        ]


def parameters_of(metadata: dict[str, Any], served: bool = False) -> dict[str, Parameter]:
    """A server's declared parameters (from its hello) as `Parameter`s, defaults included.
    `served`: each one's default is the value the server runs with (its `--param`), which an
    eval that does not set the parameter uses."""
    declared = metadata.get("parameters") or {}
    return {
        name: Parameter(
            name,
            info["type"],
            info.get("value", info.get("default")) if served else info.get("default"),
            tuple(info.get("choices") or ()),
            _range(info.get("range")),
        )
        for name, info in declared.items()
    }


def _range(declared: Any) -> Range | None:
    """A hello's `range` ([low, high], either None) as a `Range`; anything else: none."""
    def number(bound: Any) -> bool:
        return isinstance(bound, int | float) and not isinstance(bound, bool) and math.isfinite(bound)

    if isinstance(declared, list) and len(declared) == 2 and declared != [None, None] and all(
        bound is None or number(bound) for bound in declared
    ):
        return Range(*declared)
    return None


def connect(
    url: str,
    *,
    protocol: str = "seq",
    parameters: dict[str, Any] | None = None,
    image_encoding: str = "raw",
    **options: Any,
) -> PolicyHandle:
    """A `PolicyHandle` for the policy server at `url`: `protocol` is `seq` (a `seq` server),
    `openpi` (an openpi policy server) or `vla-eval` (a vla-eval model server). Images go raw,
    as `jpeg` (seq, vla-eval) or `png` (vla-eval's default). Options: `timeout_s`, `retries`,
    `backoff_s`, `open_timeout_s`, `jpeg_quality`, `token` (default: `$SEQ_SERVER_TOKEN`),
    `max_frame_bytes` (the largest frame taken from the server)."""
    if protocol not in tuple(PolicyProtocol):
        raise SeqInputError(f"protocol must be one of {', '.join(PolicyProtocol)}, got {protocol!r}.")
    taken = IMAGE_ENCODINGS[PolicyProtocol(protocol)]
    if image_encoding == ImageEncoding.PNG and image_encoding not in taken:
        raise SeqInputError(
            f"image_encoding='png' is for vla-eval servers; a {protocol} server takes raw or jpeg."
        )
    if image_encoding not in tuple(ImageEncoding):
        raise SeqInputError(f"image_encoding must be raw, png or jpeg, got {image_encoding!r}.")
    if protocol == PolicyProtocol.SEQ:
        return RemotePolicy(url, parameters=parameters, image_encoding=image_encoding, **options)
    if parameters:
        raise SeqInputError(f"a {protocol} server takes no parameters; got {', '.join(parameters)}.")
    if protocol == PolicyProtocol.OPENPI:
        if image_encoding not in taken:
            raise SeqInputError(
                "the openpi protocol sends images raw; image_encoding='jpeg' is for seq and vla-eval."
            )
        options.pop("jpeg_quality", None)
        from seq.serving.openpi import OpenPiPolicy

        return OpenPiPolicy(url, **options)
    from seq.serving.vlaeval_client import VlaEvalPolicy

    return VlaEvalPolicy(url, image_encoding=image_encoding, **options)
