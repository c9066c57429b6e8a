"""The lighter copy of a MuJoCo model that recordings draw from in software."""

from __future__ import annotations

import importlib.util
import logging
import sys

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("fast_simplification")

from seq.capture.lod import MAX_FACES, MAX_TEXTURE, drawing_model  # noqa: E402


def sphere_xml(rings: int = 60, segments: int = 70) -> str:
    """A model with one dense UV-sphere mesh (~8k triangles) and a 1024² checker texture."""
    theta = np.linspace(0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack(
        [
            np.outer(np.sin(theta), np.cos(phi)),
            np.outer(np.sin(theta), np.sin(phi)),
            np.outer(np.cos(theta), np.ones_like(phi)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    vertices = np.vstack([[0, 0, 1], ring, [0, 0, -1]]) * 0.1
    faces = []
    for j in range(segments):
        k = (j + 1) % segments
        faces.append([0, 1 + j, 1 + k])
        bottom = 1 + (rings - 2) * segments
        faces.append([len(vertices) - 1, bottom + k, bottom + j])
        for i in range(rings - 2):
            a, b = 1 + i * segments + j, 1 + i * segments + k
            faces += [[a, a + segments, b], [b, a + segments, b + segments]]
    vertex, face = " ".join(map(str, vertices.ravel())), " ".join(map(str, np.ravel(faces)))
    return f"""
    <mujoco>
      <asset>
        <texture name="grid" type="2d" builtin="checker" width="1024" height="1024" rgb1="1 1 1"
                 rgb2="0 0 0"/>
        <material name="grid" texture="grid" texrepeat="4 4"/>
        <mesh name="ball" vertex="{vertex}" face="{face}"/>
      </asset>
      <worldbody>
        <geom type="plane" size="1 1 0.1" material="grid"/>
        <body pos="0 0 0.2"><freejoint/><geom type="mesh" mesh="ball"/></body>
      </worldbody>
    </mujoco>"""


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(sphere_xml())


def test_meshes_are_simplified_and_textures_shrunk_on_a_copy(model):
    original = (
        model.mesh_facenum.copy(),
        model.mesh_vert.copy(),
        model.tex_width.copy(),
        model.tex_data.copy(),
    )
    light = drawing_model(model, max_faces=1000, max_texture=256)
    assert model.mesh_facenum[0] > 8000 and 900 <= light.mesh_facenum[0] <= 1000
    assert (light.tex_width[0], light.tex_height[0]) == (256, 256)
    assert (light.mesh_graphadr == -1).all()  # convex hulls are not uploaded
    quality = light.vis.quality  # built-in shapes are tessellated more coarsely
    assert (quality.numslices, quality.numstacks, quality.numquads) == (16, 8, 1)
    assert (model.vis.quality.numslices, model.vis.quality.numstacks) == (28, 16)
    assert light.geom_size[0, 2] == 0.5 and model.geom_size[0, 2] == 0.1  # the floor: 4 × 4 cells
    # The simulated model is untouched.
    assert (model.mesh_facenum == original[0]).all() and np.array_equal(model.mesh_vert, original[1])
    assert (model.tex_width == original[2]).all() and np.array_equal(model.tex_data, original[3])
    # The simplified sphere keeps its shape: every vertex it uses lies near the radius.
    used = np.unique(light.mesh_face[: light.mesh_facenum[0]])
    radii = np.linalg.norm(light.mesh_vert[used], axis=1)
    assert np.allclose(radii, 0.1, rtol=0.05)
    # ... and is shaded with the sphere's own normals: each corner's points outwards from the centre.
    corners = light.mesh_face[: light.mesh_facenum[0]].reshape(-1)
    shading = light.mesh_normal[light.mesh_facenormal[: light.mesh_facenum[0]].reshape(-1)]
    outwards = light.mesh_vert[corners] / np.linalg.norm(light.mesh_vert[corners], axis=1, keepdims=True)
    assert np.all(np.einsum("ij,ij->i", shading, outwards) > 0.95)
    assert np.array_equal(light.mesh_normal, model.mesh_normal)  # the mesh's normals, not new ones


def test_a_plane_keeps_its_grid_where_a_light_is_not_directional():
    lit = sphere_xml().replace("<worldbody>", '<worldbody><light pos="0 0 2" dir="0 0 -1" cutoff="30"/>')
    spotlit = mujoco.MjModel.from_xml_string(lit)
    assert drawing_model(spotlit).geom_size[0, 2] == 0.1  # a spot lights a plane unevenly
    sunlit = mujoco.MjModel.from_xml_string(lit.replace('cutoff="30"', 'directional="true"'))
    assert drawing_model(sunlit).geom_size[0, 2] == 0.5


def test_a_mesh_with_two_sided_sheets_is_drawn_in_full(model):
    faces = model.mesh_face[: model.mesh_facenum[0]]
    sheet = np.vstack([faces, faces[:, ::-1]])  # every face also seen from behind, on the same corners
    vertex = " ".join(map(str, model.mesh_vert[: model.mesh_vertnum[0]].ravel()))
    xml = sphere_xml().replace(
        '<mesh name="ball"',
        f'<mesh name="sheet" vertex="{vertex}" face="{" ".join(map(str, sheet.ravel()))}"/><mesh name="ball"',
    )
    xml = xml.replace("<freejoint/>", '<freejoint/><geom type="mesh" mesh="sheet"/>')
    sheeted = mujoco.MjModel.from_xml_string(xml)
    light = drawing_model(sheeted, max_faces=1000)
    named = {sheeted.mesh(i).name: i for i in range(sheeted.nmesh)}
    assert light.mesh_facenum[named["sheet"]] == sheeted.mesh_facenum[named["sheet"]] > 1000
    assert light.mesh_facenum[named["ball"]] <= 1000  # a closed mesh beside it is still simplified


def test_a_shrunk_texture_is_the_average_of_its_pixels(model):
    light = drawing_model(model, max_faces=None, max_texture=512)
    full = model.tex_data[: 1024 * 1024 * 3].reshape(1024, 1024, 3).astype(float)
    half = light.tex_data[: 512 * 512 * 3].reshape(512, 512, 3)
    expected = full.reshape(512, 2, 512, 2, 3).mean(axis=(1, 3))
    assert np.abs(half - expected).max() <= 1
    assert light.mesh_facenum[0] == model.mesh_facenum[0]  # max_faces=None: meshes as they are


def test_without_fast_simplification_meshes_are_drawn_in_full(model, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "fast_simplification", None)
    with caplog.at_level(logging.INFO, logger="seq.record"):
        light = drawing_model(model, max_faces=500)
    assert light.mesh_facenum[0] == model.mesh_facenum[0] and "fast-simplification" in caplog.text


@pytest.mark.skipif(not importlib.util.find_spec("metaworld"), reason="needs the metaworld extra")
def test_a_lighter_metaworld_frame_looks_like_the_full_one():
    from seq.capture.render import (
        MujocoView,
        SceneRenderer,
        choose_backend,
        mujoco_handles,
        software_renderer,
    )
    from seq.shelf.metaworld import make_env

    info = choose_backend()
    if info is None:
        pytest.skip("no offscreen OpenGL here")
    env = make_env("push-v3", 0)
    env.reset(seed=0)
    model, data = mujoco_handles(env)
    view = MujocoView(model, data, "corner2", pool=1)
    scene = view.snapshot()
    frames, renderers = [], []
    for max_faces, max_texture in ((None, None), (MAX_FACES, MAX_TEXTURE)):  # full, and the defaults
        renderer = SceneRenderer(info.backend, 224, 224, max_faces=max_faces, max_texture=max_texture)
        frames.append(renderer.render(model, scene).astype(float))
        renderers.append(renderer.renderer)
        renderer.close()
    if not software_renderer(renderers[0]):  # a GPU draws the full model whatever the limits
        assert np.array_equal(frames[0], frames[1])
        return
    psnr = 10 * np.log10(255**2 / np.mean((frames[0] - frames[1]) ** 2))
    assert 34 < psnr < 80  # close, and not the same picture drawn twice


def test_only_a_software_renderer_draws_the_lighter_model():
    from seq.capture.render import software_renderer

    assert software_renderer("llvmpipe (LLVM 15.0.6, 256 bits)") and software_renderer("softpipe")
    assert not software_renderer("NVIDIA H200/PCIe/SSE2") and not software_renderer("")


def test_a_simplified_mesh_is_kept_for_the_next_process(model, monkeypatch):
    import fast_simplification

    from seq.capture import lod
    from seq.record.paths import seq_home

    simplify = fast_simplification.simplify
    monkeypatch.setattr(lod, "_simplified", {})
    first = drawing_model(model, max_faces=700)
    (kept,) = (seq_home() / "cache" / "meshes").glob("*-700-*.npz")

    def refuse(*args, **kwargs):
        raise AssertionError("simplified again")

    monkeypatch.setattr(lod, "_simplified", {})  # a new process: only the folder remembers
    monkeypatch.setattr(fast_simplification, "simplify", refuse)
    again = drawing_model(model, max_faces=700)
    assert again.mesh_facenum[0] == first.mesh_facenum[0]
    assert np.array_equal(again.mesh_face[: again.mesh_facenum[0]], first.mesh_face[: first.mesh_facenum[0]])

    kept.write_bytes(b"not an npz")  # a damaged file is simplified anew, not trusted
    monkeypatch.setattr(fast_simplification, "simplify", simplify)
    monkeypatch.setattr(lod, "_simplified", {})
    assert drawing_model(model, max_faces=700).mesh_facenum[0] == first.mesh_facenum[0]
    assert lod._stored(next(iter(lod._simplified))) is not None  # and the file is whole again
