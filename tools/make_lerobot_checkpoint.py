"""Write a small, randomly initialised LeRobot policy as `lerobot-train` saves one: its
`pretrained_model` folder (config.json naming its `type`, model.safetensors, and LeRobot 0.4's
processors, with no dataset statistics). Nothing is downloaded (no pretrained backbone).

    $SEQ_LEROBOT_PYTHON tools/make_lerobot_checkpoint.py act|diffusion OUT \
        [--features pusht|aloha|libero|metaworld]

`pusht`: Push-T's features as LeRobot's Push-T environment gives them (a 96×96 image, a 2-D state,
a 2-D action); `aloha`: ALOHA's (the 480×640 top camera, 14 joint positions, 14-D actions);
`libero`: LIBERO's (256×256 agent-view and wrist images, the 8-D state LeRobot's
LIBERO processor makes, a 7-D action); `metaworld`: those LeRobot's MetaWorld environment config
declares (`MetaworldEnv`: the 480×480 corner2 image, a 4-D state, a 4-D action). ACT plays 7 of
each 10-action chunk, Diffusion 8 of 16: a queue left part-full at an episode's end shows whether
`reset()` empties it.
"""

import argparse

import torch
from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.envs.configs import MetaworldEnv
from lerobot.envs.utils import env_to_policy_features
from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

FEATURES = {
    "pusht": (
        {
            "observation.image": PolicyFeature(FeatureType.VISUAL, (3, 96, 96)),
            "observation.state": PolicyFeature(FeatureType.STATE, (2,)),
        },
        2,
    ),
    "aloha": (
        {
            "observation.images.top": PolicyFeature(FeatureType.VISUAL, (3, 480, 640)),
            "observation.state": PolicyFeature(FeatureType.STATE, (14,)),
        },
        14,
    ),
    "libero": (
        {
            "observation.images.image": PolicyFeature(FeatureType.VISUAL, (3, 256, 256)),
            "observation.images.image2": PolicyFeature(FeatureType.VISUAL, (3, 256, 256)),
            "observation.state": PolicyFeature(FeatureType.STATE, (8,)),
        },
        7,
    ),
}
SMALL = {
    "act": dict(
        dim_model=64,
        n_heads=2,
        dim_feedforward=128,
        n_encoder_layers=1,
        n_decoder_layers=1,
        chunk_size=10,
        n_action_steps=7,
        pretrained_backbone_weights=None,
    ),
    "diffusion": dict(down_dims=(64, 128), num_inference_steps=4, pretrained_backbone_weights=None),
}

metaworld = env_to_policy_features(MetaworldEnv())
FEATURES["metaworld"] = (
    {name: feature for name, feature in metaworld.items() if feature.type is not FeatureType.ACTION},
    metaworld["action"].shape[0],
)

parser = argparse.ArgumentParser()
parser.add_argument("kind", choices=sorted(SMALL))
parser.add_argument("out")
parser.add_argument("--features", choices=sorted(FEATURES), default="pusht")
args = parser.parse_args()
inputs, action_size = FEATURES[args.features]
extra = dict(SMALL[args.kind])
if args.kind == "diffusion":
    side = inputs[next(k for k in inputs if "image" in k)].shape[-1]
    extra["crop_shape"] = (side * 7 // 8, side * 7 // 8)
config = make_policy_config(
    args.kind,
    input_features=inputs,
    output_features={"action": PolicyFeature(FeatureType.ACTION, (action_size,))},
    device="cpu",
    **extra,
)
torch.manual_seed(0)
policy = get_policy_class(args.kind)(config)
policy.save_pretrained(args.out)
preprocessor, postprocessor = make_pre_post_processors(config, dataset_stats=None)
preprocessor.save_pretrained(args.out)
postprocessor.save_pretrained(args.out)
print(args.out)
