"""A Streamlit session without a browser: Streamlit's own protocol over its websocket.

A browser and a Streamlit server speak protobuf over one websocket (``/_stcore/stream``).
A page view or a widget change is one ``BackMsg`` whose ``rerun_script`` (a ``ClientState``)
carries the URL's query string, the page and the widget states; the server runs the script
and streams ``ForwardMsg``s back: the elements it draws (``delta``), the URL it writes
(``page_info_changed``) and, last, ``script_finished``.  ``AppSession`` sends the same
messages and reads the same answers without drawing anything, so sixty of them fit beside a
server on two cores where sixty Chromium pages do not (``benchmarks/bench_sessions.py``).

Like the browser, a session
- finds widgets by their ``key`` in the elements the server sent (a widget's id ends with it)
  and sends a changed value in the field the widget's kind uses (a selectbox its option's
  label, a number input a double, ...);
- keeps the widget states it has set and sends them with every rerun (the server keeps the
  others' values from the previous run, as it does for a browser's untouched widgets);
- sends back the query string the server last wrote (widgets bound to the URL);
- changes a widget drawn inside a fragment (``st.fragment``) with that fragment's id, so the
  server reruns the fragment alone, as the browser asks;
- keeps the messages the server marks cacheable and lists their hashes in every rerun, so
  the server sends references for unchanged elements, expiring them after
  ``max_cached_message_age`` runs as the browser's message cache does.

Unlike the browser it draws nothing, loads none of the frontend's files and sends no
heartbeats; ``bench_sessions.py --driver browser`` measures what that changes.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM_PATH = "/_stcore/stream"
RUN_TIMEOUT_S = 120.0  # one script run; past it the run counts as an error
RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN  # the script called st.rerun: another run follows
# the WidgetState field each widget kind's value travels in (streamlit/elements/widgets)
VALUE_FIELD = {
    "text_area": "string_value",
    "text_input": "string_value",
    "selectbox": "string_value",
    "radio": "string_value",
    "number_input": "double_value",
    "checkbox": "bool_value",
    "button_group": "string_array_value",
    "multiselect": "string_array_value",
}


class ProtocolError(RuntimeError):
    """The server closed the connection, ran past the timeout, or answered what no browser
    would accept (a page not found, a widget that is not there)."""


@dataclass(frozen=True)
class Widget:
    key: str  # the ``key=`` the app gave it
    id: str  # Streamlit's element id, "$$ID-<hash>-<key>"
    kind: str  # the element's type: "selectbox", "number_input", ...
    element: object  # the element's protobuf (labels of options, range, default)
    fragment: str = ""  # the id of the fragment (``st.fragment``) it was drawn in, if any

    @property
    def options(self) -> list[str]:
        """The labels a choice widget offers (what its value is sent as)."""
        options = getattr(self.element, "options", ())
        return [getattr(o, "content", o) for o in options]

    def value(self):
        """The value the server last drew (the default unless the app set another)."""
        e = self.element
        if self.kind in ("selectbox", "radio"):
            if e.set_value:
                return e.raw_value
            return self.options[e.default] if self.options else None
        if self.kind == "button_group":
            return [self.options[i] for i in e.default]
        if self.kind == "multiselect":
            return [self.options[i] for i in e.default]
        if self.kind in ("number_input", "checkbox", "text_area", "text_input"):
            return e.value if e.set_value else e.default
        return None


@dataclass
class Run:
    """One script run as the session saw it, from the request to ``script_finished``."""

    seconds: float
    messages: int = 0
    deltas: int = 0  # elements and blocks drawn (references included)
    bytes: int = 0
    references: int = 0  # elements sent as a reference to the session's message cache
    exceptions: list[str] = field(default_factory=list)  # st.exception elements drawn
    texts: list[tuple[float, str]] = field(default_factory=list)  # (seconds, Markdown text)
    fragments: set[str] = field(default_factory=set)  # fragment ids of the deltas ("": none)
    query_strings: list[str] = field(default_factory=list)  # what the run wrote to the URL


class AppSession:
    """One browser tab's worth of Streamlit: a websocket, its widgets, its URL."""

    def __init__(
        self, base_url: str, timeout_s: float = RUN_TIMEOUT_S, cookies: dict | None = None
    ):
        self.url = base_url.replace("http://", "ws://", 1).rstrip("/") + STREAM_PATH
        self.timeout_s = timeout_s
        self.cookies = cookies or {}  # sent with the websocket's handshake (st.context.cookies)
        self.page = ""
        self.query_string = ""
        self.widgets: dict[str, Widget] = {}
        self._states: dict[str, WidgetState] = {}  # the widget values this session set
        self._cache: dict[str, tuple[ForwardMsg, int]] = {}  # hash → (message, last run)
        self._runs = 0
        self._max_age = 2  # the server's max_cached_message_age, from new_session
        self._socket = None
        self.fragments: dict[str, float] = {}  # auto-rerun fragments: id -> interval (s)

    async def connect(self) -> None:
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        self._socket = await websockets.connect(
            self.url,
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=self.timeout_s,
            additional_headers={"Cookie": cookie} if cookie else None,
        )

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
            self._socket = None

    async def open(self, page: str, query_string: str = "") -> Run:
        """Open ``page`` (its url_path; "" for the default page) with ``query_string``, as
        typing the address would."""
        self.page, self.query_string = page, query_string
        self.widgets.clear()
        self._states.clear()
        return await self._rerun()

    def widget(self, key: str) -> Widget:
        """The widget whose key is ``key``, or the first whose key starts with ``key``."""
        if key in self.widgets:
            return self.widgets[key]
        for name, widget in self.widgets.items():
            if name.startswith(key):
                return widget
        raise ProtocolError(f"no widget {key!r} on page {self.page!r}")

    async def change(self, key: str, value) -> Run:
        """Set widget ``key`` to ``value`` (a label for choice widgets) and rerun."""
        widget = self.widget(key)
        state = WidgetState(id=widget.id)
        kind_field = VALUE_FIELD.get(widget.kind)
        if kind_field is None:
            raise ProtocolError(f"widget {key!r} is a {widget.kind}: not supported")
        if kind_field == "string_array_value":
            state.string_array_value.data.extend(value)
        else:
            setattr(state, kind_field, value)
        self._states[widget.id] = state
        return await self._rerun(fragment_id=widget.fragment)

    async def click(self, key: str) -> Run:
        """Click the button ``key`` (a trigger: sent with this rerun only)."""
        widget = self.widget(key)
        trigger = WidgetState(id=widget.id, trigger_value=True)
        return await self._rerun(extra=(trigger,), fragment_id=widget.fragment)

    async def rerun_fragment(self, fragment_id: str) -> Run:
        """Rerun one fragment, as the browser does every ``fragments[fragment_id]`` seconds
        for a fragment with ``run_every``."""
        return await self._rerun(fragment_id=fragment_id, auto=True)

    async def _rerun(self, extra: tuple = (), fragment_id: str = "", auto: bool = False) -> Run:
        message = BackMsg()
        rerun = message.rerun_script
        rerun.query_string = self.query_string
        rerun.page_name = self.page
        rerun.widget_states.widgets.extend([*self._states.values(), *extra])
        rerun.cached_message_hashes.extend(self._cache)
        if fragment_id:
            rerun.fragment_id = fragment_id
            rerun.is_auto_rerun = auto
        else:  # a full run registers its fragments anew (an id may change with its position)
            self.fragments.clear()
        start = time.perf_counter()
        if self._socket is None:
            raise ProtocolError("not connected")
        await self._socket.send(message.SerializeToString())
        run = Run(seconds=0.0)
        try:
            async with asyncio.timeout(self.timeout_s):
                while not await self._receive(run, start):
                    pass
        except TimeoutError:
            raise ProtocolError(f"no script_finished within {self.timeout_s:.0f} s") from None
        except websockets.ConnectionClosed as closed:
            raise ProtocolError(f"connection closed: {closed}") from None
        run.seconds = time.perf_counter() - start
        return run

    async def _receive(self, run: Run, start: float) -> bool:
        """Read one ForwardMsg into ``run``; True once the run (and any st.rerun) ended."""
        data = await self._socket.recv()
        run.messages += 1
        run.bytes += len(data)
        message = ForwardMsg()
        message.ParseFromString(data)
        kind = message.WhichOneof("type")
        if kind == "ref_hash":
            run.references += 1
            cached = self._cache.get(message.ref_hash)
            if cached is None:
                raise ProtocolError(f"a reference to a message never sent: {message.ref_hash}")
            self._cache[message.ref_hash] = (cached[0], self._runs)
            message, kind = cached[0], "delta"
        elif message.metadata.cacheable:
            self._cache[message.hash] = (message, self._runs)
        if kind == "delta":
            self._read_delta(message.delta, run, time.perf_counter() - start)
            run.fragments.add(message.delta.fragment_id)
        elif kind == "new_session":
            self._max_age = message.new_session.config.max_cached_message_age or self._max_age
        elif kind == "auto_rerun":
            self.fragments[message.auto_rerun.fragment_id] = message.auto_rerun.interval
        elif kind == "page_info_changed":
            self.query_string = message.page_info_changed.query_string
            run.query_strings.append(self.query_string)
        elif kind == "page_not_found":
            raise ProtocolError(f"page not found: {self.page!r}")
        elif kind == "script_finished" and message.script_finished != RERUN:
            self._runs += 1
            fresh = self._runs - self._max_age
            self._cache = {h: entry for h, entry in self._cache.items() if entry[1] >= fresh}
            return True
        return False

    def _read_delta(self, delta, run: Run, seconds: float) -> None:
        run.deltas += 1
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            return
        if kind == "markdown":  # st.markdown, st.caption, st.write of text
            run.texts.append((seconds, element.markdown.body))
            return
        body = getattr(element, kind)
        widget_id = getattr(body, "id", "") if kind in VALUE_FIELD or kind == "button" else ""
        if widget_id.startswith("$$ID-"):
            key = widget_id.split("-", 2)[2]
            self.widgets[key] = Widget(key, widget_id, kind, body, delta.fragment_id)
