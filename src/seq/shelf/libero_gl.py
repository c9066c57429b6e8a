"""How seq draws LIBERO's cameras: the same pixels as LIBERO, with less work and safely beside
other envs. Used by `seq.shelf.libero_env`; runs where robosuite is (the `libero` image).

- `KeptRenderContext`: robosuite's hard reset (LIBERO's, every episode) rebuilds the model and,
  with it, the OpenGL context and its 189 MB of textures; kept instead for the env's life (the
  rebuilt model is the same file, so its meshes and textures are the same ones).
- `CameraGate`: the cameras draw only the images the policy sees (LIBERO draws both ~26 times
  before an episode's first observation), each with its env's context made current.
- `lighten`: `fast_render`'s settings (no multisampling, shadows or reflections): other pixels.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def lighten(model: Any) -> None:
    """The fast mode's drawing settings (module doc): no multisampling, shadows or reflections."""
    model.vis.quality.offsamples = 0
    model.light_castshadow[:] = 0
    model.mat_reflectance[:] = 0.0


class KeptRenderContext:
    """Makes robosuite's hard reset keep the env's offscreen render context (GL context, meshes,
    textures) instead of building a new one for the rebuilt model; see the module's doc."""

    def __init__(self, inner: Any, fast: bool = False) -> None:
        self.inner, self.kept, self.fast = inner, None, fast
        self.make_sim, self.destroy_sim = inner._initialize_sim, inner._destroy_sim
        inner._destroy_sim, inner._initialize_sim = self.destroy, self.initialize
        if fast and inner.sim._render_context_offscreen is not None:
            lighten(inner.sim.model._model)
            context = inner.sim._render_context_offscreen
            make_current(context.gl_ctx)
            context.con.free()  # made again without multisampling buffers
            context._set_mujoco_context_and_buffers()

    def destroy(self) -> None:
        sim = self.inner.sim
        if sim is not None and sim._render_context_offscreen is not None:
            self.kept, sim._render_context_offscreen = sim._render_context_offscreen, None
        self.destroy_sim()

    def initialize(self, xml_string: str | None = None) -> None:
        self.make_sim(xml_string)
        if self.fast:
            lighten(self.inner.sim.model._model)
        context, self.kept = self.kept, None
        if context is not None:
            sim = self.inner.sim
            context.sim, context.model, context.data = sim, sim.model, sim.data
            sim._render_context_offscreen = context

    def release(self) -> None:
        """Let the env free its context on close (while OpenGL is still up), with that context
        current: MuJoCo frees a context's textures and buffers by number in whichever context is
        current, which would be another env's if one is in the process."""
        self.inner._destroy_sim, self.inner._initialize_sim = self.destroy_sim, self.make_sim
        self.kept = None
        sim = self.inner.sim
        if sim is not None and sim._render_context_offscreen is not None:
            make_current(sim._render_context_offscreen.gl_ctx)


def make_current(gl_context: Any) -> None:
    """Make an OpenGL context of robosuite current unless it is (switching costs a flush)."""
    current = getattr(gl_context, "_context", None)
    if os.environ.get("MUJOCO_GL", "egl") == "egl" and current:
        from OpenGL import EGL

        active = EGL.eglGetCurrentContext()
        if active and active.address == current.address:
            return
    gl_context.make_current()


class CameraGate:
    """Lets robosuite's camera sensors draw only when `drawing`: otherwise they return a blank
    image, and every observable's timing runs as before. LIBERO draws both cameras ~26 times
    before an episode's first observation (checking each sensor after a hard reset, the reset's
    and the init state's observations, each wait step) and only the last wait step's images
    reach the policy; drawing just those gives the same pixels (tested against vla-eval's).

    Each drawing first makes the env's own OpenGL context current: robosuite 1.4 never does, so
    with two envs in a process (a worker's lockstep slots) one drew with the other's context, and
    its meshes and textures (a wrong picture, tested)."""

    def __init__(self, inner: Any, cameras: list[str], size: int) -> None:
        self.inner = inner
        self.drawing = True
        self.blank = np.zeros((size, size, 3), dtype=np.uint8)
        self.names = {f"{camera}_image" for camera in cameras}
        setup = inner._setup_observables

        def setup_gated() -> Any:
            observables = setup()
            for name, observable in observables.items():
                if name in self.names:
                    observable._sensor = self.gated(observable._sensor)
            return observables

        inner._setup_observables = setup_gated
        for name, observable in inner._observables.items():
            if name in self.names:
                observable._sensor = self.gated(observable._sensor)

    def gated(self, sensor: Any) -> Any:
        def camera(obs_cache: dict[str, Any]) -> Any:
            if not self.drawing:
                return self.blank
            make_current(self.inner.sim._render_context_offscreen.gl_ctx)
            return sensor(obs_cache)

        gated: Any = camera
        gated.__modality__ = sensor.__modality__  # what robosuite's @sensor decorator sets
        return gated
