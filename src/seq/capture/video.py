"""`VideoRecorder`: an episode observer that records chosen episodes as H.264 mp4s.

Frames come from the observation's `<camera>_image` (or `pixels[camera]`) when it has one, else
from the env's MuJoCo model and data (any gymnasium, robosuite or dm_control MuJoCo env, without
the env having to be built for rendering), else from `env.render()`. One frame is taken at reset and
one every `stride` steps, `stride = round(control rate / fps)` (at least 1), and the video plays
at real time (`control rate / stride` frames per second; `fps` when the env's rate is unknown):
an episode of `steps` steps gives `1 + steps // stride` frames.

The episode's thread only snapshots the scene (microseconds) or copies the image; a background
thread renders the snapshots and encodes them (`seq.capture.mp4`, PyAV, in this process) as the
episode runs. `end` returns a `Future` of the video's path, resolved once the file is complete: a
worker runs its next episode meanwhile and records this one when it resolves, so an episode's
record never names a half-written video. An encoding that fails is logged and becomes the future's
exception, which the episode loop keeps in the episode's `observer_errors` without failing the
episode.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from seq.capture.lod import MAX_FACES, MAX_TEXTURE
from seq.capture.mp4 import Mp4Writer
from seq.capture.render import (
    MujocoView,
    SceneRenderer,
    control_hz,
    frame_stride,
    image_from_obs,
    mujoco_handles,
    to_rgb8,
    use_backend,
)
from seq.record.artifacts import artifact_name
from seq.record.episode import EpisodeResult

if TYPE_CHECKING:
    from seq.record.work import WorkItem

log = logging.getLogger("seq.capture")


@dataclass
class _Job:
    """One episode's video as the encoder thread sees it."""

    path: Path
    fps: float
    frames: int = 0
    error: str | None = None
    video: Future[dict[str, str]] = field(default_factory=Future)


class _Encoder(threading.Thread):
    """Renders snapshots and encodes the frames, one job at a time, in arrival order."""

    def __init__(self, renderer: SceneRenderer) -> None:
        super().__init__(name="seq-video", daemon=True)
        self.inbox: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.renderer = renderer
        self._writer: Mp4Writer | None = None

    def run(self) -> None:
        while True:
            message = self.inbox.get()
            kind, job = message[0], message[1]
            try:
                if kind == "frame":
                    self._frame(job, message[2])
                elif kind == "scene":
                    view, scene, upside_down = message[2:]
                    try:
                        if job.error is None:
                            self._frame(job, self.renderer.render(view.model, scene, upside_down))
                    finally:
                        view.free.put(scene)
                elif kind == "close":
                    self._close(job)
                elif kind == "warm":
                    self._warm()
            except Exception:
                job.error = job.error or traceback.format_exc()
                self._abort()
                if kind == "close":
                    self._fail(job)

    def _warm(self) -> None:
        """What the first video would otherwise wait for: the codec's libraries and a GL context."""
        try:
            import av  # noqa: F401

            if self.renderer.backend is not None:
                self.renderer.warm()
        except Exception as error:  # the first frame meets it again, and reports it there
            log.debug("warming the video encoder failed: %s", error)

    def _frame(self, job: _Job, pixels: np.ndarray) -> None:
        if job.error is not None:
            return
        if self._writer is None:
            height, width = pixels.shape[:2]
            self._writer = Mp4Writer(job.path, job.fps, width, height)
        self._writer.write(pixels)
        job.frames += 1

    def _close(self, job: _Job) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
        elif job.error is None:
            job.error = "no frame was recorded."
        if job.error is not None:
            self._fail(job)
        elif not job.video.set_running_or_notify_cancel():  # it was given up on: no half a record
            job.path.unlink(missing_ok=True)
        else:
            job.video.set_result({"video": str(job.path)})

    def _fail(self, job: _Job) -> None:
        log.warning("recording %s failed: %s", job.path.name, job.error)
        job.path.unlink(missing_ok=True)
        if job.video.set_running_or_notify_cancel():
            job.video.set_exception(
                RuntimeError(f"recording failed, so this episode has no video:\n{job.error}")
            )

    def _abort(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.abort()


class NotRecordable(ValueError):
    """An env nothing can be recorded from; its message is the one sentence the report shows
    (`seq.capture.observers.unrecorded_note`)."""


def _check_rendered(env: Any, rendered: Any) -> None:
    """Refuse, in one sentence, what `env.render()` returned where it is not an RGB(A) image."""
    shape = getattr(rendered, "shape", None)
    if shape is not None and len(shape) == 3 and shape[-1] in (3, 4):
        return
    hint = (
        " (a gymnasium env renders only when made with render_mode='rgb_array')"
        if getattr(env, "render_mode", "") is None
        else ""
    )
    got = "None" if rendered is None else f"a {type(rendered).__name__}"
    got += f" of shape {shape}" if shape is not None else ""
    raise NotRecordable(
        f"{type(env).__name__} cannot be recorded: its render() returned {got}, not an RGB array{hint}."
    )


def _even(image: np.ndarray) -> np.ndarray:
    """H.264 in yuv420p needs even sides: repeat the last row or column where one is odd."""
    height, width = image.shape[:2]
    if height % 2:
        image = np.concatenate([image, image[-1:]], axis=0)
    if width % 2:
        image = np.concatenate([image, image[:, -1:]], axis=1)
    return image


class VideoRecorder:
    """Records the episodes named in `items` (all of them when None) from `camera` at `fps`.

    `width`/`height` size frames rendered from a MuJoCo model (an observation's image or
    `env.render()` keeps its own size). `fast` turns off shadows, reflections and multisampling,
    and where OpenGL is software draws meshes simplified to `max_faces` triangles and textures
    shrunk to `max_texture` pixels a side (None: as they are; `seq.capture.lod`).
    `gl` is the offscreen OpenGL backend chosen for the eval (`seq.capture.render.choose_backend`)
    and `gl_renderer` what renders behind it, as that probe found ("": ask OpenGL here).
    """

    def __init__(
        self,
        directory: str | Path,
        items: list[str] | None = None,
        camera: str | None = None,
        fps: float = 20,
        fast: bool = True,
        width: int = 224,
        height: int = 224,
        gl: str | None = None,
        gl_renderer: str = "",
        max_faces: int | None = MAX_FACES,
        max_texture: int | None = MAX_TEXTURE,
        **options: Any,
    ) -> None:
        use_backend(gl)  # before the benchmark's first `import mujoco`, in this worker
        if gl is not None:
            # Import MuJoCo (and its GL backend module) on this thread, before the encoder thread
            # warms a context: a benchmark importing it in reset at the same moment as that thread
            # would meet a half-imported `mujoco.egl` (Python's import deadlock guard).
            with contextlib.suppress(Exception):  # the benchmark's own import reports it
                import mujoco  # noqa: F401
        self.directory = Path(directory)
        self.items = None if items is None else set(items)
        self.camera, self.fps, self.fast = camera, float(fps), fast
        self.width, self.height, self.gl, self.gl_renderer = int(width), int(height), gl, gl_renderer
        self.max_faces, self.max_texture = max_faces, max_texture
        self.options = options
        self._encoder: _Encoder | None = None
        self._views: dict[tuple[int, int], MujocoView] = {}
        self._job: _Job | None = None
        self._source: Any = None
        self._stride = 1
        self._steps = 0
        if self.items is None or self.items:
            self._send("warm", None)  # the worker's first video then need not wait for EGL and PyAV

    def _view(self, model: Any, data: Any) -> MujocoView:
        """The camera on this model and data, kept for the next episodes of the same env."""
        key = (id(model), id(data))
        view = self._views.pop(key, None)
        if view is None or view.model is not model or view.data is not data:
            view = MujocoView(model, data, self.camera, self.fast)
        self._views[key] = view
        while len(self._views) > 4:
            self._views.pop(next(iter(self._views)))
        return view

    def _send(self, *message: Any) -> None:
        if self._encoder is None:
            renderer = SceneRenderer(
                self.gl,
                self.width,
                self.height,
                self.fast,
                max_faces=self.max_faces,
                max_texture=self.max_texture,
                renderer=self.gl_renderer,
            )
            self._encoder = _Encoder(renderer)
            self._encoder.start()
        if not self._encoder.is_alive():
            raise RuntimeError("the video encoder thread has stopped.")
        self._encoder.inbox.put(message)

    def _capture(self, env: Any, obs: Any) -> None:
        job = self._job
        if job is None or job.error is not None:  # a failed recording is reported once, by `end`
            return
        if isinstance(self._source, MujocoView):
            view = self._source
            self._send("scene", job, view, view.snapshot(), view.upside_down)
        elif self._source == "obs":
            self._send("frame", job, _even(to_rgb8(image_from_obs(obs, self.camera))))
        else:
            self._send("frame", job, _even(to_rgb8(env.render())))

    def begin(self, item: WorkItem, env: Any, obs: Any) -> None:
        self._job, self._steps = None, 0
        if self.items is not None and item.item_id not in self.items:
            return
        if image_from_obs(obs, self.camera) is not None:
            self._source = "obs"
        elif (handles := mujoco_handles(env)) is not None:
            self._source = self._view(*handles)
        elif callable(getattr(env, "render", None)):
            self._source = "render"
            _check_rendered(env, env.render())
        else:
            image = f"{self.camera}_image" if self.camera else "image (pixels)"
            raise NotRecordable(
                f"{type(env).__name__} cannot be recorded: its observation holds no {image}, it has "
                "no MuJoCo model, and it has no render() returning an RGB array."
            )
        hz = control_hz(env)
        self._stride = frame_stride(hz, self.fps)
        self.directory.mkdir(parents=True, exist_ok=True)
        fps = hz / self._stride if hz else self.fps  # real time, as near `fps` as whole steps allow
        self._job = _Job(self.directory / f"{artifact_name(item.item_id)}.mp4", fps)
        self._capture(env, obs)

    def step(self, env: Any, obs: Any, action: Any, reward: float, act_seed: int) -> None:
        if self._job is None:
            return
        self._steps += 1
        if self._steps % self._stride == 0:
            self._capture(env, obs)

    def end(self, result: EpisodeResult) -> dict[str, str] | Future[dict[str, str]]:
        """`{"video": path}` once the file is complete, as a `Future` (empty: not recorded)."""
        job, self._job, self._source = self._job, None, None
        if job is None:
            return {}
        self._send("close", job)
        return job.video
