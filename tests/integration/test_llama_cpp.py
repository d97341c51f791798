"""The llama.cpp engine for the bundled summariser (built by deploy/setup.sh)."""

import pytest

from episodic.components import Components
from episodic.config import load_settings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage
from episodic.reasoning.llama_cpp_llm import LlamaCppLLM, llama_cpp_available

pytestmark = pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python not built")

MESSAGES = [
    ChatMessage("system", "Answer with one short sentence."),
    ChatMessage("user", "Heard: 'The train to Oxford leaves from platform seven.' Where does the train go?"),
]


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    return LlamaCppLLM(load_settings(env={}, data_dir=tmp_path_factory.mktemp("d")))


def test_reproducible_and_grounded(llm):
    greedy = llm.generate(MESSAGES, max_tokens=40, temperature=0)
    assert "oxford" in greedy.lower()
    assert llm.generate(MESSAGES, max_tokens=40, temperature=0) == greedy
    a = llm.generate(MESSAGES, max_tokens=40, temperature=0.7, seed=11)
    b = llm.generate(MESSAGES, max_tokens=40, temperature=0.7, seed=11)
    assert a == b and a


def test_auto_engine_picks_llama_cpp_and_rejects_non_gguf(tmp_path):
    c = Components(load_settings(env={}, data_dir=tmp_path))
    assert isinstance(c.llm, LlamaCppLLM) and c.llm.model_id.endswith("@llama.cpp")
    with pytest.raises(ModelError, match="gguf"):
        LlamaCppLLM(load_settings(env={}, data_dir=tmp_path, llm_model_path=str(tmp_path)))
    with pytest.raises(ModelError):
        LlamaCppLLM(load_settings(env={}, data_dir=tmp_path, llm_model_path=str(tmp_path / "x.gguf"))).generate(
            MESSAGES
        )
