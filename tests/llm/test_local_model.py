"""The packaged local model's assembly: parts joined in order, checked, never left half-made."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from llm_test_prompts import PERSON, Question

from chronomem.errors import ConfigurationError, MissingExtraError
from chronomem.llm.local_model import LocalChatModel, LocalModel, LocalServer, ServerOptions, assemble, local_model
from chronomem.llm.settings import LLMSettings
from chronomem.providers.guard import allow_model_requests


def _parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contents: list[bytes], prefix: str) -> tuple[str, ...]:
    """Installed part packages as the registry lays them out: ``NAME/data/partNN.bin``."""
    root = tmp_path / "site"
    for number, content in enumerate(contents, start=1):
        package = root / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number:02d}.bin").write_bytes(content)
    monkeypatch.syspath_prepend(str(root))
    return tuple(f"{prefix}{n}" for n in range(1, len(contents) + 1))


def _model(modules: tuple[str, ...], whole: bytes, *, sha256: str | None = None, size: int | None = None) -> LocalModel:
    return LocalModel(name="tiny", file_name="tiny.gguf", extra="local-model", part_modules=modules,
                      size=len(whole) if size is None else size,
                      sha256=sha256 or hashlib.sha256(whole).hexdigest())


def test_the_parts_are_joined_in_order_checked_and_reported(tmp_path, monkeypatch) -> None:
    contents = [b"GGUF" + bytes(range(200)), b"second part", b"third"]
    modules = _parts(tmp_path, monkeypatch, contents, "tiny_ok_part")
    seen: list[tuple[int, int]] = []
    path = assemble(_model(modules, b"".join(contents)), tmp_path / "cache", progress=lambda d, t: seen.append((d, t)))
    assert path.read_bytes() == b"".join(contents)
    assert seen[-1] == (len(b"".join(contents)),) * 2
    # the next start trusts the checked file: nothing is read again
    assert assemble(_model(modules, b"".join(contents)), tmp_path / "cache", progress=seen.append) == path
    assert len(seen) == len(contents)


def test_a_wrong_hash_is_refused_and_leaves_no_model_behind(tmp_path, monkeypatch) -> None:
    modules = _parts(tmp_path, monkeypatch, [b"abc", b"def"], "tiny_bad_part")
    with pytest.raises(ConfigurationError, match="SHA-256"):
        assemble(_model(modules, b"abcdef", sha256="0" * 64), tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_parts_of_the_wrong_size_are_refused_before_anything_is_written(tmp_path, monkeypatch) -> None:
    modules = _parts(tmp_path, monkeypatch, [b"abc"], "tiny_short_part")
    with pytest.raises(ConfigurationError, match="reinstall"):
        assemble(_model(modules, b"abc", size=4), tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_a_missing_part_names_the_extra_to_install(tmp_path) -> None:
    model = LocalModel("tiny", "tiny.gguf", "local-model", ("no_such_part_package_1",), 1, "0" * 64)
    with pytest.raises(MissingExtraError, match=r"chronomem\[local-model\]"):
        assemble(model, tmp_path)


def test_local_alone_names_the_packaged_default_and_unknown_names_are_refused() -> None:
    assert LLMSettings(model="local").model == "local:qwen2.5-coder-1.5b"
    assert local_model("qwen2.5-coder-0.5b").size == 491_400_064
    with pytest.raises(ConfigurationError, match=r"qwen2\.5-coder-1\.5b"):
        local_model("llama-70b")


_FAKE_SERVER = r'''
import http.server, json, sys
port = int(sys.argv[1])
answer = json.dumps({"name": "Ada", "role": "speaker"})
class Handler(http.server.BaseHTTPRequestHandler):
    def _send(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self._send({"data": [{"id": "tiny"}]})
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self._send({"choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


class _FakeLlamaServer(LocalServer):
    """A LocalServer whose child is a tiny OpenAI-compatible stand-in instead of llama.cpp."""

    def command(self) -> list[str]:
        return [sys.executable, "-c", _FAKE_SERVER, str(self.port)]


async def test_a_managed_server_that_died_is_started_again_on_the_next_call(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())  # no llama-cpp needed here
    server = _FakeLlamaServer(tmp_path / "tiny.gguf", ServerOptions(startup_s=30), log_path=tmp_path / "log")
    with server, allow_model_requests():  # a loopback server of our own
        model = LocalChatModel(server, "tiny")
        assert (await model.complete(PERSON, Question(text="Ada: hi"))).output.name == "Ada"
        process = server.process
        assert process is not None
        process.kill()  # as the kernel's OOM killer would
        process.wait()
        assert not server.running
        assert (await model.complete(PERSON, Question(text="Ada: hi again"))).output.name == "Ada"
        assert server.running and server.restarts == 1


def test_a_server_stopped_as_asked_leaves_no_log_behind_but_one_that_died_does(monkeypatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    with _FakeLlamaServer(Path("tiny.gguf"), ServerOptions(startup_s=30)) as healthy:
        assert healthy.log_path.exists()
    assert not healthy.log_path.parent.exists()
    ended = _FakeLlamaServer(Path("tiny.gguf"), ServerOptions(startup_s=30)).start()
    assert ended.process is not None
    ended.process.terminate()  # as a test harness ends the processes it adopted
    ended.process.wait()
    ended.stop()
    assert not ended.log_path.parent.exists()
    died = _FakeLlamaServer(Path("tiny.gguf"), ServerOptions(startup_s=30)).start()
    assert died.process is not None
    died.process.kill()
    died.process.wait()
    died.stop()
    assert died.log_path.exists()  # what it printed before it died is kept for whoever looks
    shutil.rmtree(died.log_path.parent)


def test_the_servers_log_tells_prompt_reuse_and_where_the_time_went(tmp_path) -> None:
    log = tmp_path / "server.log"
    log.write_text("Llama.generate: 600 prefix-match hit, remaining 20 prompt tokens to eval\n"
                   "llama_perf_context_print: prompt eval time =    1500.00 ms /    20 tokens\n"
                   "llama_perf_context_print:        eval time =    4000.50 ms /    50 runs\n")
    server = LocalServer(tmp_path / "model.gguf", ServerOptions(), log_path=log)
    offset = server.log_size()
    with log.open("a") as more:
        more.write("Llama.generate: 700 prefix-match hit, remaining 30 prompt tokens to eval\n"
                   "llama_perf_context_print: prompt eval time =     500.00 ms /    30 tokens\n"
                   "llama_perf_context_print:        eval time =    2000.00 ms /    25 runs\n")
    assert server.cached_tokens_since(0) == 1300 and server.cached_tokens_since(offset) == 700
    assert server.seconds_since(0) == (2.0, 6.0005)
    assert server.seconds_since(offset) == (0.5, 2.0)
