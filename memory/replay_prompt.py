"""The replay prompt: one log sentence for a moment, from what was seen and heard (used only
by model-written summaries; the embedded default composes its summaries without a model)."""

from __future__ import annotations

from collections.abc import Sequence

from episodic.core.llm import ChatMessage

REPLAY_SYSTEM = (
    "You write the log of a video recorder. Given what was seen and heard during one short "
    "moment of a recording, you reply with exactly one plain English sentence that says what "
    "happens: who or what is there, what is said or done, and where. Use only the facts you are "
    "given; never add names, numbers or places that are not in them."
)


def replay_messages(
    visual: list[str], speech: str, images: Sequence[bytes] = ()
) -> list[ChatMessage]:
    """Semantic replay (HippoMM Eq. 6): one sentence from key visual and auditory context.
    ``images`` (JPEG key frames) go with the final request for a vision-language model;
    text-only backends ignore them."""
    seen = "; ".join(visual) if visual else "nothing (no picture)"
    heard = f'"{speech}"' if speech else "no speech"
    user = (
        f"Seen: {seen}\n"
        f"Heard: {heard}\n"
        "Write the one-sentence log entry for this moment."
    )
    return [
        ChatMessage("system", REPLAY_SYSTEM),
        ChatMessage("user", _REPLAY_EXAMPLE_USER),
        ChatMessage("assistant", _REPLAY_EXAMPLE_REPLY),
        ChatMessage("user", user, images=tuple(images)),
    ]


# One worked example: small models copy the shape of an answer far better than instructions.
_REPLAY_EXAMPLE_USER = (
    'Seen: a scene with a park bench, fountain; colours: green, grey; on-screen text: "CITY PARK"\n'
    'Heard: "We are meeting Anna at the fountain at noon."\n'
    "Write the one-sentence log entry for this moment."
)
_REPLAY_EXAMPLE_REPLY = "By a fountain in City Park, someone says they are meeting Anna there at noon."
