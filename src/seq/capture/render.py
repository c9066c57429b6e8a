"""Frames from an env without a display: the OpenGL backend, MuJoCo scenes, observation images.

- `choose_backend()` picks how MuJoCo renders offscreen: `$MUJOCO_GL` if the user set it, else EGL
  (a GPU's, or Mesa's software llvmpipe), else OSMesa, each probed once in a child process, and
  says which it got and what renders behind it (`GLInfo`). `use_backend()` sets it in this process
  (it must happen before `import mujoco`: MuJoCo reads `MUJOCO_GL` then).
- `MujocoView` snapshots what a camera sees into an `mjvScene` on the episode's thread (microseconds);
  `SceneRenderer` turns snapshots into pixels on another thread, where the GL context lives.
  `fast=True` turns off shadows, reflections and multisampling (software rendering spends most of
  its time on them: MetaWorld at 224², ~9 → ~85 fps here), and where OpenGL is software draws from
  a lighter copy of the model (`seq.capture.lod`: simplified meshes, smaller textures; ~180 fps).
- `image_from_obs` finds a camera's image in an observation (`<camera>_image`, `pixels[camera]`).
"""

from __future__ import annotations

import functools
import os
import queue
import subprocess
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from seq.capture.lod import MAX_FACES, MAX_TEXTURE, drawing_model

BACKENDS = ("egl", "osmesa")
_PROBE = (  # imports MuJoCo's backend module for a name in BACKENDS, not seq (~0.1 s less)
    "from mujoco.{name} import GLContext\n"
    "context = GLContext(8, 8)\n"
    "context.make_current()\n"
    "from OpenGL import GL\n"
    "print(GL.glGetString(GL.GL_RENDERER).decode())\n"
    "context.free()\n"
)


@dataclass(frozen=True)
class GLInfo:
    """The offscreen backend in use (`egl`, `osmesa`, or whatever `$MUJOCO_GL` named) and the
    renderer behind it as OpenGL reports it (`llvmpipe …` is software rendering)."""

    backend: str
    renderer: str = ""


def probe(name: str, timeout: float = 60.0) -> GLInfo | None:
    """Whether MuJoCo can make a `name` context here, tried in a child process (it may crash)."""
    environment = {**os.environ, "MUJOCO_GL": name, "PYOPENGL_PLATFORM": name}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE.format(name=name)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.strip().splitlines()
    return GLInfo(name, lines[-1] if lines else "")


@functools.cache
def choose_backend() -> GLInfo | None:
    """`$MUJOCO_GL` when set, else the first of EGL and OSMesa that works here (None: neither)."""
    current = os.environ.get("MUJOCO_GL", "").strip().lower()
    if current:
        return GLInfo(current)
    for name in BACKENDS:
        found = probe(name)
        if found is not None:
            return found
    return None


def use_backend(name: str | None) -> None:
    """Make MuJoCo (and PyOpenGL) in this process render with `name`, unless already decided."""
    if not name:
        return
    os.environ.setdefault("MUJOCO_GL", name)
    if name in BACKENDS and "OpenGL" not in sys.modules:
        os.environ.setdefault("PYOPENGL_PLATFORM", name)


def headless() -> str | None:
    """For a benchmark whose observations MuJoCo renders: choose and set an offscreen backend now,
    before its simulator is imported. Returns the backend's name (None: none works here)."""
    info = choose_backend()
    use_backend(info.backend if info else None)
    return info.backend if info else None


def current_renderer() -> str:
    """`GL_RENDERER` of the OpenGL context current on this thread ("" if it cannot be read)."""
    try:
        from OpenGL import GL

        return (GL.glGetString(GL.GL_RENDERER) or b"").decode(errors="replace")
    except Exception:
        return ""


def software_renderer(renderer: str) -> bool:
    """Whether an OpenGL renderer string names a CPU rasterizer (Mesa's llvmpipe, softpipe, swrast)."""
    return any(name in renderer.lower() for name in ("llvmpipe", "softpipe", "swrast", "software"))


def gl_context(name: str | None, width: int, height: int) -> Any:
    """A MuJoCo GL context of backend `name`, whatever backend `import mujoco` picked."""
    if name == "egl":
        from mujoco.egl import GLContext
    elif name == "osmesa":
        from mujoco.osmesa import GLContext
    else:
        from mujoco.gl_context import GLContext
    return GLContext(width, height)


def mujoco_handles(env: Any) -> tuple[Any, Any] | None:
    """The `(MjModel, MjData)` behind a gymnasium, robosuite or dm_control env, if any."""
    try:
        import mujoco
    except ImportError:  # an environment without MuJoCo (ManiSkill's image): no MuJoCo env here
        return None

    candidates = [env, getattr(env, "unwrapped", None)]
    candidates += [getattr(c, "_env", None) for c in list(candidates) if c is not None]
    for owner in candidates:
        if owner is None:
            continue
        model, data = getattr(owner, "model", None), getattr(owner, "data", None)
        if isinstance(model, mujoco.MjModel) and isinstance(data, mujoco.MjData):
            return model, data
        sim = getattr(owner, "sim", None)  # robosuite's MjSim
        if sim is not None:
            model, data = getattr(sim.model, "_model", None), getattr(sim.data, "_data", None)
            if isinstance(model, mujoco.MjModel) and isinstance(data, mujoco.MjData):
                return model, data
        physics = getattr(owner, "physics", None)  # dm_control
        if physics is not None:
            model, data = getattr(physics.model, "ptr", None), getattr(physics.data, "ptr", None)
            if isinstance(model, mujoco.MjModel) and isinstance(data, mujoco.MjData):
                return model, data
    return None


def image_from_obs(obs: Any, camera: str | None) -> np.ndarray | None:
    """`obs["<camera>_image"]`, `obs["pixels"][camera]`, `obs["images"][camera]`, or with no camera
    named a lone `obs["pixels"]` array; None when the observation holds no such image."""
    if not isinstance(obs, dict):
        return None
    found: Any = None
    if camera is not None:
        found = obs.get(f"{camera}_image")
        for group in ("pixels", "images"):
            if found is None and isinstance(obs.get(group), dict):
                found = obs[group].get(camera)
    elif isinstance(obs.get("pixels"), np.ndarray):
        found = obs["pixels"]
    if found is None:
        return None
    image = np.asarray(found)
    return image if image.ndim == 3 and image.shape[-1] in (3, 4) else None


def to_rgb8(image: Any) -> np.ndarray:
    """An `H×W×3` uint8 copy of an RGB(A) image, floats in [0, 1] scaled."""
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[-1] not in (3, 4):
        raise ValueError(f"a frame must be H×W×3 (or ×4), got shape {array.shape}.")
    array = array[..., :3]
    if array.dtype != np.uint8:
        scale = 255.0 if np.issubdtype(array.dtype, np.floating) and array.max(initial=0) <= 1.0 else 1.0
        array = np.clip(array * scale, 0, 255).astype(np.uint8)
    return np.array(array, copy=True, order="C")


def control_hz(env: Any) -> float | None:
    """Env steps per simulated second: `metadata["render_fps"]`, else `1 / dt`; None if unknown."""
    for owner in (getattr(env, "unwrapped", None), env):
        metadata = getattr(owner, "metadata", None)
        if isinstance(metadata, dict) and metadata.get("render_fps"):
            return float(metadata["render_fps"])
        dt = getattr(owner, "dt", None) or getattr(owner, "control_timestep", None)
        if isinstance(dt, (int, float)) and dt > 0:
            return 1.0 / float(dt)
    return None


def frame_stride(hz: float | None, fps: float) -> int:
    """Record every `stride`-th step so that a video at `fps` plays at about real time."""
    if not hz or fps <= 0:
        return 1
    return max(1, round(hz / fps))


class MujocoView:
    """One camera on a model, snapshotted on the episode's thread into a pool of scenes (at most
    `pool`: an episode runs that many frames ahead of its renderer before it waits)."""

    def __init__(
        self, model: Any, data: Any, camera: str | int | None, fast: bool = True, pool: int = 64
    ) -> None:
        import mujoco

        self.model, self.data = model, data
        self.camera = mujoco.MjvCamera()
        self.option = mujoco.MjvOption()
        self.upside_down = False
        if camera is None or camera == -1:
            mujoco.mjv_defaultFreeCamera(model, self.camera)
        else:
            if isinstance(camera, int):
                index = camera
            else:
                index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
            if not 0 <= index < model.ncam:
                names = ", ".join(model.camera(i).name for i in range(model.ncam)) or "none"
                raise ValueError(f"the model has no camera {camera!r} (it has: {names}).")
            self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self.camera.fixedcamid = index
            # A camera whose image "up" points at the floor (MetaWorld's corner cameras) is turned over.
            orientation = np.array(data.cam_xmat[index], dtype=np.float64)
            if not orientation.any():  # the env has not computed its kinematics yet
                mujoco.mju_quat2Mat(orientation, np.array(model.cam_quat[index], dtype=np.float64))
            self.upside_down = bool(orientation.reshape(3, 3)[2, 1] < -0.25)
        self.fast, self.pool, self.made = fast, pool, 0
        # Room for twice the geoms, sites and tendon segments the default options show; a scene that
        # fills up is replaced by one twice as large. (A scene's cost grows with it: 1,000 ~2 ms.)
        self.maxgeom = 2 * (model.ngeom + model.nsite + model.ntendon + model.nwrap) + 32
        self.free: queue.Queue[Any] = queue.Queue()

    def _scene(self) -> Any:
        import mujoco

        scene = mujoco.MjvScene(self.model, maxgeom=self.maxgeom)
        if self.fast:
            scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self.made += 1
        return scene

    def snapshot(self, timeout: float = 60.0) -> Any:
        """The scene as the camera sees it now: a free pooled scene, or a new one while the pool has
        fewer than `pool`, else it blocks until the renderer hands one back."""
        import mujoco

        try:
            scene = self.free.get_nowait()
        except queue.Empty:
            scene = self._scene() if self.made < self.pool else self.free.get(timeout=timeout)
        mujoco.mjv_updateScene(
            self.model, self.data, self.option, None, self.camera, mujoco.mjtCatBit.mjCAT_ALL, scene
        )
        while scene.ngeom >= scene.maxgeom:  # it may not have held everything: a larger one
            self.maxgeom, self.made = 2 * scene.maxgeom, self.made - 1
            scene = self._scene()
            mujoco.mjv_updateScene(
                self.model, self.data, self.option, None, self.camera, mujoco.mjtCatBit.mjCAT_ALL, scene
            )
        return scene


class SceneRenderer:
    """Pixels from scene snapshots, on the one thread that owns its GL context.

    Keeps a rendering context for the last few models (building one uploads every mesh and
    texture; convex hulls, which a recording never draws, are left out), made from a copy of the
    model so the env's own model is never changed. When `fast`, that copy has multisampling off
    and, where OpenGL is software (`software_renderer`), is cheaper to draw
    (`seq.capture.lod.drawing_model`: meshes simplified to `max_faces` triangles, textures shrunk
    to `max_texture` pixels a side); a GPU draws every mesh and texture in full.
    """

    def __init__(
        self,
        backend: str | None,
        width: int,
        height: int,
        fast: bool = True,
        keep: int = 4,
        max_faces: int | None = MAX_FACES,
        max_texture: int | None = MAX_TEXTURE,
        renderer: str = "",
    ) -> None:
        self.backend, self.width, self.height, self.fast, self.keep = backend, width, height, fast, keep
        self.max_faces, self.max_texture = max_faces, max_texture
        self._gl: Any = None
        self.renderer = renderer
        self._contexts: OrderedDict[int, tuple[Any, Any]] = OrderedDict()

    def warm(self) -> None:
        """Make this thread's GL context now (EGL's start-up), not at the first frame."""
        if self._gl is None:
            self._gl = gl_context(self.backend, self.width, self.height)
            self._gl.make_current()
            # What `choose_backend` probed, when given: asking again imports PyOpenGL's GL (~0.1 s).
            self.renderer = self.renderer or current_renderer()

    def _context(self, model: Any) -> Any:
        import mujoco

        key = id(model)
        if key in self._contexts and self._contexts[key][0] is model:
            self._contexts.move_to_end(key)
            return self._contexts[key][1]
        self.warm()
        lighter = self.fast and software_renderer(self.renderer)
        own = drawing_model(model, self.max_faces if lighter else None, self.max_texture if lighter else None)
        own.vis.global_.offwidth, own.vis.global_.offheight = self.width, self.height
        if self.fast:  # no multisampling, and no shadow map to allocate
            own.vis.quality.offsamples = 0
            own.vis.quality.shadowsize = 0
        context = mujoco.MjrContext(own, mujoco.mjtFontScale.mjFONTSCALE_50)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, context)
        self._contexts[key] = (model, context)
        while len(self._contexts) > self.keep:
            _, (_, old) = self._contexts.popitem(last=False)
            old.free()
        return context

    def render(self, model: Any, scene: Any, upside_down: bool = False) -> np.ndarray:
        """The `height × width × 3` image of `scene` (a snapshot of `model`)."""
        import mujoco

        context = self._context(model)
        viewport = mujoco.MjrRect(0, 0, self.width, self.height)
        mujoco.mjr_render(viewport, scene, context)
        pixels = np.empty((self.height, self.width, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(pixels, None, viewport, context)
        return np.ascontiguousarray(pixels[:, ::-1] if upside_down else pixels[::-1])

    def close(self) -> None:
        for _, context in self._contexts.values():
            context.free()
        self._contexts.clear()
        if self._gl is not None:
            self._gl.free()
            self._gl = None


def frame(
    env: Any, camera: str | None = None, width: int = 224, height: int = 224, fast: bool = True
) -> np.ndarray:
    """One frame of a MuJoCo env's camera, rendered now on this thread (for scripts and checks;
    a `VideoRecorder` renders on its own thread instead)."""
    handles = mujoco_handles(env)
    if handles is None:
        raise ValueError(f"{type(env).__name__} has no MuJoCo model and data to render.")
    info = choose_backend()
    renderer = _frame_renderers.get((width, height, fast))
    if renderer is None:
        renderer = _frame_renderers[(width, height, fast)] = SceneRenderer(
            info.backend if info else None, width, height, fast
        )
    view = MujocoView(*handles, camera, fast, pool=1)
    return renderer.render(handles[0], view.snapshot(), view.upside_down)


_frame_renderers: dict[tuple[int, int, bool], SceneRenderer] = {}
