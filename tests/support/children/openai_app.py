"""Code under test that calls OpenAI as production code does: one client built at import
time from the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``), used by plain
functions. The tests import it while vcr_kit is active (a fresh import stands for a
fresh process: ``importlib.reload``), so the module-level client is built under it.
"""

from __future__ import annotations

import openai

#: Built once, at import, as an application module builds it.
CLIENT = openai.OpenAI()


def ask(question: str) -> str:
    """One Chat Completions turn: the answer's text."""
    answer = CLIENT.chat.completions.create(
        model="gpt-5-mini", messages=[{"role": "user", "content": question}]
    )
    return answer.choices[0].message.content or ""


def embed(text: str) -> list[float]:
    """The embedding of ``text`` (the SDK asks base64 and decodes it)."""
    return CLIENT.embeddings.create(model="text-embedding-3-small", input=text).data[0].embedding
