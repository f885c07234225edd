"""Built-in tools against real local servers: http.request, email.send (SMTP, outbox), vars.set."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import func, select

from tests.helpers.documents import chain, node
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import tools
from webapp.engine.tools import ToolCall, ToolError
from webapp.models import OutboxMessage
from webapp.tools.web import address_problem, host_allowed, public_address


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/slow"):
            time.sleep(1.5)
        if self.path.startswith("/text"):
            self._send(200, b"plain words", "text/plain; charset=utf-8")
        elif self.path.startswith("/fail"):
            self._send(503, b'{"error": "busy"}')
        elif self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/missing"):
            self._send(404, b"{}")
        else:
            self._echo()

    def do_POST(self):
        self._echo()

    def _echo(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else None
        echo = {
            "method": self.command,
            "path": self.path,
            "body": body,
            "key": self.headers.get("Idempotency-Key"),
            "x": self.headers.get("X-Test"),
        }
        self._send(200, json.dumps(echo).encode())


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that timed out on /slow is expected


@pytest.fixture(scope="module")
def http_server():
    server = QuietServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def call(config: dict | None = None, timeout: float = 5, instance_id: int = 1) -> ToolCall:
    return ToolCall("key-1", "alice", timeout, instance_id, "node", 1, config or {})


OPEN = {"HTTP_ALLOWED_HOSTS": ["127.0.0.1"], "HTTP_ALLOW_PRIVATE": True}


def http(inputs: dict, config: dict | None = None, timeout: float = 5):
    return tools.get("http.request").function(inputs, call(config, timeout))


def test_http_is_denied_by_default_and_private_addresses_need_permission(http_server):
    with pytest.raises(ToolError) as denied:
        http({"url": f"{http_server}/json"})
    assert (denied.value.code, denied.value.retryable) == ("host_not_allowed", False)
    with pytest.raises(ToolError) as private:
        http({"url": f"{http_server}/json"}, {"HTTP_ALLOWED_HOSTS": ["127.0.0.1"]})
    assert (private.value.code, private.value.retryable) == ("address_not_allowed", False)
    assert "127.0.0.1" in private.value.message


def test_http_get_and_post_json_with_the_idempotency_key(http_server):
    got = http({"url": f"{http_server}/json?a=1", "headers": {"X-Test": "yes"}}, OPEN)
    assert got["status"] == 200
    assert got["json"] == {
        "method": "GET",
        "path": "/json?a=1",
        "body": None,
        "key": "key-1",
        "x": "yes",
    }
    assert got["headers"]["content-type"] == "application/json"
    posted = http({"url": f"{http_server}/json", "method": "post", "body": {"n": [1, 2]}}, OPEN)
    assert json.loads(posted["json"]["body"]) == {"n": [1, 2]}
    text = http({"url": f"{http_server}/text"}, OPEN)
    assert (text["text"], "json" in text) == ("plain words", False)


def test_http_errors_say_whether_a_retry_can_help(http_server):
    with pytest.raises(ToolError) as busy:
        http({"url": f"{http_server}/fail"}, OPEN)
    assert (busy.value.code, busy.value.retryable) == ("http_503", True)
    with pytest.raises(ToolError) as missing:
        http({"url": f"{http_server}/missing"}, OPEN)
    assert (missing.value.code, missing.value.retryable) == ("http_404", False)
    with pytest.raises(ToolError) as slow:
        http({"url": f"{http_server}/slow", "timeout": 0.3}, OPEN)
    assert (slow.value.code, slow.value.retryable) == ("timeout", True)
    with pytest.raises(ToolError) as scheme:
        http({"url": "ftp://127.0.0.1/x"}, OPEN)
    assert (scheme.value.code, scheme.value.retryable) == ("bad_url", False)
    with pytest.raises(ToolError) as method:
        http({"url": f"{http_server}/json", "method": "TRACE"}, OPEN)
    assert method.value.code == "bad_request"
    with pytest.raises(ToolError) as headers:
        http({"url": f"{http_server}/json", "headers": ["x"]}, OPEN)
    assert headers.value.code == "bad_request"
    with pytest.raises(ToolError) as refused:
        http({"url": "http://127.0.0.1:1/"}, {**OPEN})
    assert (refused.value.code, refused.value.retryable) == ("connection_failed", True)


def test_host_patterns_and_address_checks():
    assert host_allowed("api.example.org", ["*.example.org"])
    assert host_allowed("API.Example.org.", ["api.example.org"])
    assert not host_allowed("example.org", ["*.example.org"])
    assert not host_allowed("evil.org", [])
    for private in (
        "10.1.2.3",
        "192.168.0.1",
        "127.0.0.1",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",  # noqa: S104 - an address to refuse, not one to bind
        "224.0.0.1",
    ):
        assert not public_address(private), private
    assert public_address("93.184.216.34")
    assert public_address("2606:4700:4700::1111")


# (address, public?) — IPv6 forms that reach an IPv4 host are judged by that IPv4 host.
ADDRESSES = [
    ("93.184.216.34", True),
    ("2606:4700:4700::1111", True),
    ("::ffff:93.184.216.34", True),  # IPv4-mapped public
    ("64:ff9b::5db8:d822", True),  # NAT64 of 93.184.216.34
    ("2002:5db8:d822::1", True),  # 6to4 of 93.184.216.34
    ("::127.0.0.1", False),  # IPv4-compatible loopback
    ("::7f00:1", False),
    ("::ffff:127.0.0.1", False),  # IPv4-mapped
    ("::ffff:0:127.0.0.1", False),  # IPv4-translated (SIIT)
    ("::ffff:10.0.0.1", False),
    ("64:ff9b::7f00:1", False),  # NAT64 well-known prefix
    ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
    ("64:ff9b:1::5db8:d822", False),  # local-use NAT64
    ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
    ("2002:c0a8:1::1", False),  # 6to4 of 192.168.0.1
    ("2002:a9fe:a9fe::", False),  # 6to4 of 169.254.169.254
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1 (inverted)
    ("2001:0:7f00:1::1", False),  # Teredo, server 127.0.0.1
    ("2001:0:4136:e378:8000:63bf:a2ca:2dcb", False),  # Teredo, public ends: still not global
    ("10.1.2.3", False),
    ("172.16.0.1", False),
    ("192.168.0.1", False),
    ("127.0.0.1", False),
    ("127.255.255.254", False),
    ("169.254.169.254", False),
    ("100.64.0.1", False),  # shared address space (CGN)
    ("192.0.0.1", False),
    ("198.18.0.1", False),  # benchmarking
    ("192.0.2.1", False),  # documentation
    ("240.0.0.1", False),  # reserved
    ("255.255.255.255", False),
    ("0.0.0.0", False),  # noqa: S104 - an address to refuse, not one to bind
    ("224.0.0.1", False),
    ("::", False),
    ("::1", False),
    ("fe80::1", False),
    ("fe80::1%eth0", False),
    ("fec0::1", False),  # site-local
    ("fc00::1", False),
    ("fd12:3456::1", False),
    ("ff02::1", False),
    ("ff0e::1", False),  # global-scope multicast
    ("2001:db8::1", False),
    ("100::1", False),  # discard-only
    ("not-an-address", False),
]


@pytest.mark.parametrize(("address", "public"), ADDRESSES)
def test_address_guard(address, public):
    assert public_address(address) is public, address_problem(address)


@pytest.mark.parametrize(
    ("host", "inner"),
    [
        ("[::127.0.0.1]", "127.0.0.1"),
        ("[64:ff9b::7f00:1]", "127.0.0.1"),
        ("[2002:7f00:1::]", "127.0.0.1"),
        ("[::ffff:7f00:1]", None),
        ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "127.0.0.1"),
    ],
)
def test_http_to_an_ipv6_form_of_loopback_is_refused(http_server, host, inner):
    port = http_server.rsplit(":", 1)[1]
    with pytest.raises(ToolError) as refused:
        http({"url": f"http://{host}:{port}/json"}, {"HTTP_ALLOWED_HOSTS": ["*"]})
    assert (refused.value.code, refused.value.retryable) == ("address_not_allowed", False)
    assert "HTTP_ALLOW_PRIVATE" in refused.value.message
    if inner:
        assert host.strip("[]") in refused.value.message
        assert f"embeds the IPv4 address {inner}" in refused.value.message


def test_http_does_not_follow_redirects(http_server):
    with pytest.raises(ToolError) as moved:
        http({"url": f"{http_server}/redirect"}, OPEN)
    assert (moved.value.code, moved.value.retryable) == ("http_302", False)


def test_a_process_calling_a_disguised_loopback_address_fails_naming_it(
    engine, app, http_server, monkeypatch
):
    monkeypatch.setitem(app.config, "HTTP_ALLOWED_HOSTS", ["*"])
    port = http_server.rsplit(":", 1)[1]
    doc = chain(
        (
            "fetch",
            node(
                "serviceTask",
                tool="http.request",
                inputs={"url": f"'http://[64:ff9b::7f00:1]:{port}/json'"},
                saveTo="fetched",
            ),
        )
    )
    instance_id = start(engine, publish_document(doc))
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert instance.error["code"] == "address_not_allowed"
    assert "64:ff9b::7f00:1" in instance.error["message"]
    assert "127.0.0.1" in instance.error["message"]


class SMTPHandler(socketserver.StreamRequestHandler):
    def handle(self):
        write = self.wfile.write
        write(b"220 test ESMTP\r\n")
        data = None
        while line := self.rfile.readline():
            command = line.decode().strip()
            upper = command.upper()
            if data is not None:
                if command == ".":
                    self.server.messages.append("\n".join(data))
                    data = None
                    write(b"250 OK\r\n")
                else:
                    data.append(command)
            elif upper.startswith(("EHLO", "HELO")):
                write(b"250 test\r\n")
            elif upper == "DATA":
                data = []
                write(b"354 go\r\n")
            elif upper == "QUIT":
                write(b"221 bye\r\n")
                return
            else:
                write(b"250 OK\r\n")


def test_email_goes_by_smtp_when_configured():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SMTPHandler)
    server.messages = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = {
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": server.server_address[1],
            "SMTP_STARTTLS": False,
            "SMTP_SENDER": "flow@example.org",
        }
        sent = tools.get("email.send").function(
            {"to": ["a@example.org", "b@example.org"], "subject": "Hi\nthere", "body": "Body"},
            call(config),
        )
        assert sent["sent"] is True
        message = server.messages[0]
        assert "Subject: Hi there" in message
        assert "To: a@example.org, b@example.org" in message
        assert f"Message-ID: {sent['message_id']}" in message
        with pytest.raises(ToolError) as down:
            tools.get("email.send").function(
                {"to": "a@example.org", "subject": "x"}, call({**config, "SMTP_PORT": 1})
            )
        assert (down.value.code, down.value.retryable) == ("smtp_failed", True)
    finally:
        server.shutdown()
        server.server_close()


def test_email_without_smtp_lands_in_the_outbox_once(engine):
    instance_id = start(engine, publish_document(chain()))
    send = tools.get("email.send").function
    first = send(
        {"to": "a@example.org", "subject": "S", "body": "B"}, call(instance_id=instance_id)
    )
    again = send(
        {"to": "a@example.org", "subject": "S", "body": "B"}, call(instance_id=instance_id)
    )
    assert (
        first == again == {"sent": False, "outbox_id": first["outbox_id"], "to": ["a@example.org"]}
    )
    engine.rollback()
    assert engine.scalar(select(func.count()).select_from(OutboxMessage)) == 1
    with pytest.raises(ToolError) as bad:
        send({"to": ["not an address"], "subject": "S"}, call())
    assert (bad.value.code, bad.value.retryable) == ("bad_request", False)


def test_tools_inside_a_process(engine, app, http_server, monkeypatch):
    monkeypatch.setitem(app.config, "HTTP_ALLOWED_HOSTS", ["127.0.0.1"])
    monkeypatch.setitem(app.config, "HTTP_ALLOW_PRIVATE", True)
    doc = chain(
        (
            "calc",
            node(
                "serviceTask",
                tool="vars.set",
                inputs={"url": f"'{http_server}/json'", "to": "$input.mail"},
                saveTo="c",
            ),
        ),
        (
            "fetch",
            node(
                "serviceTask", tool="http.request", inputs={"url": "$vars.c.url"}, saveTo="fetched"
            ),
        ),
        (
            "mail",
            node(
                "serviceTask",
                tool="email.send",
                inputs={
                    "to": "$vars.c.to",
                    "subject": "'Fetched'",
                    "body": "'status ' + $vars.fetched.json.method",
                },
            ),
        ),
    )
    version = publish_document(doc)
    instance_id = start(engine, version, input={"mail": "ops@example.org"})
    assert drain(engine) == 1, "fetch and mail followed on in the delivery of calc"
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["fetched"]["json"]["key"].endswith(":fetch:3")
    outbox = engine.scalar(select(OutboxMessage))
    assert (outbox.recipients, outbox.body, outbox.instance_id) == (
        ["ops@example.org"],
        "status GET",
        instance_id,
    )


def test_a_tool_s_unstorable_text_is_kept_as_replacement_characters(engine, test_tools):
    """NUL and lone surrogates from a tool (output or error) cannot crash the step on PostgreSQL."""
    from tests.helpers.documents import chain, node
    from tests.helpers.instances import load, start
    from tests.helpers.processes import publish_document
    from tests.helpers.workers import drain

    ok = publish_document(
        chain(("call", node("serviceTask", tool="test.odd_text", saveTo="got"))), key="odd"
    )
    failing = publish_document(
        chain(("call", node("serviceTask", tool="test.odd_text", retries=0,
                            inputs={"fail": "true"}))), key="odd-fail",
    )  # fmt: skip
    done, failed = start(engine, ok), start(engine, failing)
    drain(engine)
    instance = load(engine, done)
    assert instance.status == "completed"
    assert instance.vars["got"] == {"key\ufffd": ["nul \ufffd", "surrogate \ufffd"], "fine": "ok"}
    incident = load(engine, failed)
    assert incident.status == "failed"
    assert (incident.error["code"], incident.error["message"]) == (
        "odd\ufffdcode",
        "upstream said \ufffd\ufffd",
    )
