"""Requests from outside: the JSON API with basic auth, real HTTP to a live server, and calls
made at the same moment."""

from __future__ import annotations

import base64
import http.client
import json
import threading
from typing import Any
from urllib.parse import urlsplit


def send(client, order: str, payload: Any = None):
    body = {"name": "paid", "correlation_key": order, "payload": payload}
    return client.post("/api/messages", json=body, headers=basic("operator"))


def post_json(base: str, path: str, body: dict, headers: dict) -> tuple[int, dict]:
    """POST over real HTTP to the live server at `base`."""
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=60)
    try:
        connection.request(
            "POST", path, json.dumps(body), {"Content-Type": "application/json", **headers}
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def at_once(count: int, call) -> list:
    """Run `call` in `count` threads released together; their results."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(index: int) -> None:
        barrier.wait()
        results[index] = call()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def basic(username: str, password: str = "flowdesk-demo") -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}
