"""A copy of a MuJoCo model that is cheaper to draw, for videos rendered in software.

At 224² a robot covers a few thousand pixels, and MetaWorld's Sawyer alone brings 67k triangles and
a 1024² table texture: on a CPU renderer (Mesa's llvmpipe) drawing those triangles is most of a
frame, and uploading them and the textures' mipmaps is most of building a rendering context.
`drawing_model` returns a copy (the simulated model is never touched) in which

- each visual mesh above `max_faces` triangles is simplified to about `max_faces` by quadric edge
  collapse (`fast-simplification`), its seams welded first so that no crack opens, and each
  corner of it is shaded with the mesh's own normal found nearest it (within 60° of its face, so
  creases stay sharp): MetaWorld's frames are 37 dB from the full model's, against 31–34 dB
  with normals recomputed from the simplified mesh, which shaded the Sawyer in facets;
- each texture is halved (2×2 pixels averaged) until it is at most `max_texture` pixels wide (a
  frame this small samples those mipmap levels anyway);
- spheres, capsules, cylinders and ellipsoids are drawn with at most 16 slices and 8 stacks, and a
  box with one quad a face (MuJoCo's defaults, 28, 16 and 4, are for large windows: at 224² the
  frame is the same to ~50 dB PSNR and a software frame ~15 % cheaper);
- where every light is directional, a plane is drawn as at most 4 × 4 cells (MetaWorld's floor
  is 80 × 80): the grid only lets per-vertex lighting vary across the plane, and a directional
  light lights every point of a plane alike (same frame to 0.1 dB; ~0.7 ms of a software frame);
- convex hulls are not uploaded (a recording never draws them).

Meshes with texture coordinates are left as they are (their seams carry the texture), and so are
meshes made partly of two-sided sheets (edge collapse folds a sheet away: MetaWorld's Sawyer lost
its display panel). The simplified meshes and shrunk textures are cached by content: every
MetaWorld task shares one Sawyer, simplified once, and kept under `SEQ_HOME/cache/meshes` for
the workers of later evals.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("seq.record")
MAX_FACES = 1500
MAX_TEXTURE = 128
SLICES, STACKS, QUADS = 16, 8, 1
PLANE_CELLS = 4
CACHE_VERSION = 3  # of the simplified meshes kept on disk: a new way of simplifying changes it
TWO_SIDED_SHARE = 0.01  # of a mesh's faces: more means sheets, drawn in full (a stray pair does not)
_simplified: dict[tuple[bytes, int], tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}
_shrunk: dict[tuple[Any, ...], np.ndarray] = {}


def drawing_model(
    model: Any, max_faces: int | None = MAX_FACES, max_texture: int | None = MAX_TEXTURE
) -> Any:
    """A copy of `model` with meshes simplified and textures shrunk (None: leave them as they are);
    with `max_faces` set, built-in shapes are tessellated more coarsely too."""
    own = copy.copy(model)
    own.mesh_graphadr[:] = -1
    if max_faces:
        _simplify_meshes(own, int(max_faces))
        quality = own.vis.quality
        quality.numslices, quality.numstacks = min(quality.numslices, SLICES), min(quality.numstacks, STACKS)
        quality.numquads = min(quality.numquads, QUADS)
        if _only_directional_lights(own):
            _coarsen_planes(own, PLANE_CELLS)
    if max_texture:
        _shrink_textures(own, int(max_texture))
    return own


def _digest(*arrays: np.ndarray) -> bytes:
    """A content key for the caches (SHA-1, hardware-accelerated: a few ms for a MetaWorld scene)."""
    digest = hashlib.sha1()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).data.cast("B"))
    return digest.digest()


def _simplify_meshes(model: Any, max_faces: int) -> None:
    try:
        import fast_simplification
    except ImportError:
        log.info("fast-simplification is not installed: recordings draw every mesh in full.")
        return
    for mesh in range(model.nmesh):
        faces = int(model.mesh_facenum[mesh])
        if faces <= max_faces or model.mesh_texcoordadr[mesh] >= 0:
            continue
        vertadr, vertnum = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
        faceadr = int(model.mesh_faceadr[mesh])
        vertices = model.mesh_vert[vertadr : vertadr + vertnum]
        triangles = model.mesh_face[faceadr : faceadr + faces]
        normaladr, normalnum = int(model.mesh_normaladr[mesh]), int(model.mesh_normalnum[mesh])
        normals = model.mesh_normal[normaladr : normaladr + normalnum]
        corner_normals = model.mesh_facenormal[faceadr : faceadr + faces]
        key = (_digest(vertices, triangles, normals, corner_normals), max_faces)
        if key not in _simplified:
            found = _stored(key)
            if found is None:
                found = _simplify(
                    fast_simplification, vertices, triangles, normals, corner_normals, max_faces
                )
                _store(key, found)
            _simplified[key] = found
        found = _simplified[key]
        if found is None or len(found[0]) > vertnum:
            continue
        points, new_triangles, new_corner_normals = found
        model.mesh_vert[vertadr : vertadr + len(points)] = points
        model.mesh_face[faceadr : faceadr + len(new_triangles)] = new_triangles
        model.mesh_facenormal[faceadr : faceadr + len(new_triangles)] = new_corner_normals
        model.mesh_facenum[mesh] = len(new_triangles)


def _only_directional_lights(model: Any) -> bool:
    directional = getattr(model, "light_directional", None)
    if directional is None:  # MuJoCo 3.3.3 and later: `light_type`
        import mujoco

        return bool(np.all(model.light_type == mujoco.mjtLightType.mjLIGHT_DIRECTIONAL))
    return bool(np.all(directional))


def _coarsen_planes(model: Any, cells: int) -> None:
    """Finite planes drawn as at most `cells` grid cells a side (a plane's third size is the
    spacing of the grid it is drawn with; 0 draws the finest)."""
    for geom in np.flatnonzero(model.geom_type == 0):  # mjGEOM_PLANE
        half_x, half_y, spacing = (float(v) for v in model.geom_size[geom])
        widest = 2 * max(half_x, half_y)
        if half_x > 0 and half_y > 0 and (spacing <= 0 or widest / spacing > cells):
            model.geom_size[geom, 2] = widest / cells


def _cache_path(key: tuple[bytes, int]) -> Path:
    from seq.record.paths import seq_home

    return seq_home() / "cache" / "meshes" / f"{key[0].hex()}-{key[1]}-{CACHE_VERSION}.npz"


def _stored(key: tuple[bytes, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A simplification an earlier process wrote under `SEQ_HOME/cache/meshes` (None: none usable)."""
    try:
        with np.load(_cache_path(key)) as stored:
            return stored["points"], stored["triangles"], stored["corner_normals"]
    except (OSError, ValueError, KeyError):
        return None


def _store(key: tuple[bytes, int], found: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> None:
    """Keep a simplification for later processes; a folder that cannot be written only costs time."""
    path = _cache_path(key)
    if found is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with open(partial, "wb") as file:
            np.savez(file, points=found[0], triangles=found[1], corner_normals=found[2])
        os.replace(partial, path)
    except OSError as error:
        log.debug("could not keep a simplified mesh in %s: %s", path.parent, error)


def _simplify(
    library: Any,
    vertices: np.ndarray,
    triangles: np.ndarray,
    normals: np.ndarray,
    corner_normals: np.ndarray,
    max_faces: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Welded, simplified points and triangles, and for each corner of each triangle the mesh's
    own normal to draw it with; None when it fails, or when the mesh has two-sided sheets (faces
    drawn from both sides on the same corners, like the Sawyer's display panel), which edge
    collapse folds out of sight."""
    points = vertices.astype(np.float64)
    tolerance = 1e-5 * max(float(np.ptp(points, axis=0).max()), 1e-9)
    _, first, welded = np.unique(np.round(points / tolerance), axis=0, return_index=True, return_inverse=True)
    faces = welded.reshape(-1)[triangles]
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])]
    _, sharing = np.unique(np.sort(faces, axis=1), axis=0, return_counts=True)
    if (sharing > 1).sum() > TWO_SIDED_SHARE * len(faces):
        log.info("a mesh has two-sided sheets, which simplifying would lose; it is drawn in full.")
        return None
    try:
        simple_points, simple_faces = library.simplify(
            points[first], faces.astype(np.int32), target_count=max_faces
        )
    except Exception as error:  # a degenerate mesh: draw it in full
        log.info("could not simplify a mesh (%s); it is drawn in full.", error)
        return None
    if len(simple_faces) == 0:
        return None
    chosen = _nearest_normals(points, triangles, normals, corner_normals, simple_points, simple_faces)
    return simple_points.astype(np.float32), simple_faces.astype(np.int32), chosen.astype(np.int32)


def _nearest_normals(
    points: np.ndarray,
    triangles: np.ndarray,
    normals: np.ndarray,
    corner_normals: np.ndarray,
    simple_points: np.ndarray,
    simple_faces: np.ndarray,
    candidates: int = 8,
) -> np.ndarray:
    """For each corner of the simplified triangles, the index of the original normal to shade it
    with: the one used nearest that corner on the original mesh, among those within 60° of the
    simplified face (so a crease stays sharp and a smooth surface stays smooth)."""
    from scipy.spatial import cKDTree

    corner_points = points[triangles].reshape(-1, 3)  # each corner of the original, with its normal
    corner_normal = corner_normals.reshape(-1)
    unit = normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    corners = simple_points[simple_faces]  # (faces, 3, 3)
    facing = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    facing /= np.maximum(np.linalg.norm(facing, axis=1, keepdims=True), 1e-12)
    count = min(candidates, len(corner_points))
    distance, nearest = cKDTree(corner_points).query(corners.reshape(-1, 3), k=count)
    distance, nearest = distance.reshape(-1, count), nearest.reshape(-1, count)
    options = corner_normal[nearest]  # (corners, count) normal indices
    agreement = np.einsum("ckd,cd->ck", unit[options], np.repeat(facing, 3, axis=0))
    score = np.where(agreement > 0.5, distance, np.inf)
    best = np.where(
        np.isfinite(score.min(axis=1)), score.argmin(axis=1), agreement.argmax(axis=1)
    )  # none within 60°: the closest in direction
    return options[np.arange(len(options)), best].reshape(-1, 3)


def _shrink_textures(model: Any, max_texture: int) -> None:
    for texture in range(model.ntex):
        width, height = int(model.tex_width[texture]), int(model.tex_height[texture])
        channels, address = int(model.tex_nchannel[texture]), int(model.tex_adr[texture])
        if width <= max_texture or width % 2 or height % 2:
            continue
        pixels = model.tex_data[address : address + width * height * channels]
        key = (_digest(pixels), width, height, channels, max_texture)
        if key not in _shrunk:
            image = pixels.reshape(height, width, channels)
            while image.shape[1] > max_texture and image.shape[1] % 2 == 0 and image.shape[0] % 2 == 0:
                wide = image.astype(np.uint16)
                image = (
                    (wide[0::2, 0::2] + wide[1::2, 0::2] + wide[0::2, 1::2] + wide[1::2, 1::2] + 2) // 4
                ).astype(np.uint8)
            _shrunk[key] = image
        small = _shrunk[key]
        model.tex_data[address : address + small.size] = small.reshape(-1)
        model.tex_height[texture], model.tex_width[texture] = small.shape[:2]
