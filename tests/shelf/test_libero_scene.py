"""LIBERO's goal predicates as the port evaluates them (`seq.shelf.libero_scene`), on a small
MuJoCo scene of their shapes: a plate, a bowl, a region site and a drawer's slide."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from seq.shelf.libero_scene import GoalChecks, UnportableGoal, object_boxes

SCENE = """
<mujoco>
  <worldbody>
    <geom name="table" type="box" size="0.5 0.5 0.05" pos="0 0 -0.05"/>
    <site name="basket_region" pos="0.3 0 0.05" size="0.05 0.05 0.05" type="box"/>
    <body name="plate_main" pos="0 0 0.01">
      <freejoint/>
      <geom name="plate_g0" type="box" size="0.08 0.08 0.01"/>
    </body>
    <body name="bowl_main" pos="0 0 0.04">
      <freejoint/>
      <geom name="bowl_g0" type="box" size="0.03 0.03 0.02"/>
    </body>
    <body name="cabinet_main" pos="-0.3 0 0.1">
      <body name="cabinet_drawer">
        <joint name="cabinet_slide" type="slide" axis="1 0 0" range="-0.2 0"/>
        <geom name="drawer_g0" type="box" size="0.05 0.05 0.02" contype="0" conaffinity="0"/>
        <geom name="drawer_g1" type="box" size="0.04 0.04 0.01" euler="0 0 45"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
ON_PLATE = {"kind": "on_object", "object": "bowl_main", "target": "plate_main",
            "object_geoms": ["bowl_g0"], "target_geoms": ["plate_g0"]}
IN_BASKET = {"kind": "in_site", "object": "bowl_main", "site": "basket_region", "size": [0.05, 0.05, 0.05]}
OPEN = {"kind": "joint", "joints": ["cabinet_slide"], "op": "<", "threshold": -0.14, "every": False}


def scene(bowl: tuple[float, float, float], slide: float = 0.0) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(SCENE)
    data = mujoco.MjData(model)
    data.qpos[7:10] = bowl
    data.qpos[14] = slide
    mujoco.mj_forward(model, data)
    return model, data


def met(check: dict, data: mujoco.MjData, model: mujoco.MjModel) -> bool:
    return GoalChecks(mujoco, model, [check]).met(data)


def test_a_bowl_resting_on_the_plate_is_on_it_and_not_once_moved_off() -> None:
    model, resting = scene((0.0, 0.0, 0.04))  # touching the plate's top
    assert resting.ncon > 0
    assert met(ON_PLATE, resting, model)
    _, aside = scene((0.025, 0.0, 0.04))  # still touching, centres 2.5 cm apart: LIBERO's < 3 cm
    assert met(ON_PLATE, aside, model)
    _, off_centre = scene((0.035, 0.0, 0.04))  # touching, 3.5 cm apart
    assert not met(ON_PLATE, off_centre, model)
    _, lifted = scene((0.0, 0.0, 0.10))  # above, no contact
    assert not met(ON_PLATE, lifted, model)


def test_in_a_region_is_its_box_with_a_centimetre_below() -> None:
    model, inside = scene((0.3, 0.0, 0.05))
    assert met(IN_BASKET, inside, model)
    _, just_below = scene((0.3, 0.0, -0.005))  # 5 mm under the box: LIBERO allows 1 cm
    assert met(IN_BASKET, just_below, model)
    for outside in ((0.36, 0.0, 0.05), (0.3, 0.0, -0.02), (0.3, 0.0, 0.11)):
        assert not met(IN_BASKET, scene(outside)[1], model), outside


def test_a_joint_test_is_its_threshold_and_a_goal_is_every_check() -> None:
    model, closed = scene((0.0, 0.0, 0.04), slide=0.0)
    _, opened = scene((0.0, 0.0, 0.04), slide=-0.15)
    assert not met(OPEN, closed, model) and met(OPEN, opened, model)
    both = GoalChecks(mujoco, model, [ON_PLATE, OPEN])
    assert both.met(opened) and not both.met(closed)


def test_a_goal_without_a_port_or_of_an_unknown_kind_is_refused_by_name() -> None:
    model, _ = scene((0.0, 0.0, 0.04))
    unported = {"kind": "unported", "predicate": ["stack", "a", "b"],
                "why": "libero: the goal ['stack', 'a', 'b']"}
    with pytest.raises(UnportableGoal, match="stack"):
        GoalChecks(mujoco, model, [unported])
    with pytest.raises(ValueError, match="'levitate'"):
        GoalChecks(mujoco, model, [{"kind": "levitate"}])
    with pytest.raises(ValueError, match="no body 'saucer_main'"):
        GoalChecks(mujoco, model, [{**ON_PLATE, "target": "saucer_main"}])


def test_an_objects_box_holds_its_collision_geoms_turned_and_leaves_out_visual_ones() -> None:
    model, data = scene((0.0, 0.0, 0.04))
    boxes = object_boxes(mujoco, model, data, ["cabinet", "bowl"], {})
    half = 0.04 * np.sqrt(2)  # drawer_g1 turned 45 degrees; drawer_g0 collides with nothing
    assert np.allclose(boxes["cabinet"], [-0.3 - half, -half, 0.09, -0.3 + half, half, 0.11], atol=1e-6)
    assert np.allclose(boxes["bowl"], [-0.03, -0.03, 0.02, 0.03, 0.03, 0.06], atol=1e-6)
