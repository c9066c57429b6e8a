"""Chat models (`models=`): configured in SEQ_HOME/models.toml, keys from seq secrets, called through
the openai library against a real OpenAI-compatible HTTP server; only the declared ones."""

from __future__ import annotations

import pytest
from fake_chat import FakeChatServer, write_models

import seq
from seq.isolation.models import chat_for

pytest.importorskip("openai")

HELLO = [{"role": "user", "content": "Task: reach"}]


def test_a_declared_model_answers_with_its_key_and_no_reasoning(seq_home):
    with FakeChatServer(["reach the puck"]) as server:
        write_models(seq_home, server.base_url, model="qwen3-8b", key_secret="planner-key")
        seq.secret.set("planner-key", env="PLANNER_KEY", value="sk-test-123")
        chat = chat_for(["planner"], "my-robot")
        assert chat("planner", HELLO, max_tokens=8, temperature=0) == "reach the puck"
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer sk-test-123"
    body = request["body"]
    assert body["model"] == "qwen3-8b" and body["max_tokens"] == 8
    assert body["reasoning"] == {"effort": "none"}


def test_an_endpoint_that_refuses_reasoning_is_asked_without_it(seq_home):
    with FakeChatServer(["push"], refuse_reasoning=True) as server:
        write_models(seq_home, server.base_url)
        chat = chat_for(["planner"], "my-robot")
        assert chat("planner", HELLO) == "push"
        assert chat("planner", HELLO) == "push"
    sent = ["reasoning" in r["body"] for r in server.requests]
    assert sent == [True, False, False]  # refused once, then never sent again


def test_reasoning_off_in_the_configuration_is_never_sent(seq_home):
    with FakeChatServer(["push"]) as server:
        write_models(seq_home, server.base_url, reasoning=False)
        assert chat_for(["planner"], "my-robot")("planner", HELLO) == "push"
    assert "reasoning" not in server.requests[0]["body"]


def test_only_declared_models_are_callable(seq_home):
    with FakeChatServer(["push"]) as server:
        write_models(seq_home, server.base_url)
        chat = chat_for(["planner"], "my-robot")
        with pytest.raises(PermissionError, match=r"'gpt' is not declared in this policy's models="):
            chat("gpt", HELLO)
    assert server.requests == []


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        (None, "has no [models.planner] with a base_url"),
        ('[models.planner]\nmodel = "x"\n', "has no [models.planner] with a base_url"),
        ('[models.planner]\nbase_url = "http://x/v1"\ntimeout_s = -1\n', "timeout_s must be a positive"),
        ("[models.planner\n", "not valid TOML"),
        ('[models.planner]\nbase_url = "http://x/v1"\ntimeout_s = nan\n', "timeout_s must be a positive"),
        ('[models.planner]\nbase_url = "http://x/v1"\ntimeout_s = inf\n', "got inf"),
        (b'[models.planner]\nmodel = "\xff"\n', "not valid TOML, which is UTF-8 text"),
    ],
)
def test_a_model_not_configured_is_refused_in_words(seq_home, config, fragment):
    if config is not None:
        seq_home.mkdir(parents=True, exist_ok=True)
        path = seq_home / "models.toml"
        if isinstance(config, bytes):
            path.write_bytes(config)
        else:
            path.write_text(config)
    with pytest.raises(seq.SeqInputError) as refused:
        chat_for(["planner"], "my-robot")
    assert fragment in str(refused.value) and "models.toml" in str(refused.value)
