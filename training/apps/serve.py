"""A local web app to watch, replay and play domino games: ``python -m training serve``.

Three modes, each game a session in memory under a random id (so every browser tab has its own):

* **watch** - agents in every seat (baselines, ``search[:N]``, shipped agents, checkpoints); the
  page advances one move at a time (play, pause, step);
* **play** - a person takes a seat against agents: only the seat's legal moves are offered, and
  the agents' replies are played before the answer comes back;
* **replay** - a game record (:mod:`domino_env.records`) rebuilt at any step by ``replay``.

The table is the env's own picture (``table_image``, a PNG): a person's seat sees it as that
seat sees it (others' hands face down), a replay shows every hand or one seat's view with the
tiles it could not see dimmed. Everything goes through the env's public API and the terminal
game's helpers (:mod:`training.apps.play`). Bad input (an unknown variant, agent or option, an
illegal move, a malformed record) is answered 400 with what was wrong and what is allowed, and
the game stays as it was. The server binds 127.0.0.1 unless told otherwise: it runs agents for
whoever reaches it. A page names built-in agents and the checkpoints the server was started
with (the shipped ones in ``--agents-dir``, and each ``--agent PATH``), never another file on
the server: a checkpoint loads without running code, but reading any file a page names would
tell whether it exists and spend the server's memory on it.
"""

from __future__ import annotations

import io
import json
import secrets
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import cycle, islice
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from PIL import Image
from pydantic import BaseModel, Field

from domino_env import SPECS, DominoEnv, GameRecorder, move_text, raw_env, replay
from domino_env.agents import AGENTS, SEARCH_NAMES, TIER_NAMES, Agent, is_builtin
from domino_env.records import start_game
from training.apps.play import PERSON, EventFeed, board_text, check_seat, final_totals, move_menu, result_text
from training.eval.evaluate import Contestant, contestant, rules_table
from training.model.names import parse_guided_name

WEB = Path(__file__).with_name("web")
LOG_LINES = 12  # the last events a state shows in words
MAX_SESSIONS = 200  # games kept in memory; the oldest goes first


class NewGame(BaseModel):
    mode: Literal["watch", "play"]
    variant: str
    options: dict[str, Any] = Field(default_factory=dict)
    agents: list[str] = Field(min_length=1)  # watch: an agent per seat; play: the opponents (in turn)
    seat: int = 0  # play: the person's seat
    seed: int | None = None


class Move(BaseModel):
    action: int


class Step(BaseModel):
    step: int


@dataclass
class Session:
    """One game: its env and recorder (watch, play), or its record and step (replay)."""

    mode: str
    env: DominoEnv
    names: list[str]
    seat: int | None = None  # the person's seat (play)
    agents: list[Agent | None] = field(default_factory=list)
    recorder: GameRecorder | None = None
    feed: EventFeed | None = None
    log: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None  # replay: the record
    step: int = 0  # the moves played (replay: the step shown)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def finished(self) -> bool:
        return all(self.env.terminations.values())

    @property
    def to_move(self) -> int:
        return self.env.possible_agents.index(self.env.agent_selection)


def served_checkpoints(agents_dir: Path, checkpoints: Sequence[str] = ()) -> list[str]:
    """The checkpoints a page may name: the shipped ones in ``agents_dir``, then ``checkpoints``
    (files or run folders, as the command line gave them; one already listed is left out)."""
    shipped = sorted(str(path) for path in agents_dir.glob("*.pt")) if agents_dir.is_dir() else []
    served: dict[Path, str] = {}
    for name in [*shipped, *checkpoints]:
        served.setdefault(Path(name).resolve(), name)
    return list(served.values())


def served_files(served: list[str]) -> set[Path]:
    """What the served names stand for, resolved once: each file or run folder, and a run
    folder's latest checkpoint (whether or not it is there now: a run may be writing it)."""
    known = {Path(name).resolve() for name in served}
    return known | {path / "checkpoints" / "latest.pt" for path in known if path.is_dir()}


def check_served(name: str, served: list[str], known: set[Path]) -> None:
    """Refuse (ValueError) an agent that is neither built in nor one of the ``served``
    checkpoints (``known``: :func:`served_files`), alone or guiding ``search:[N:]CHECKPOINT``,
    before any file of that name is read: the page can neither load another file nor learn
    whether one exists. (An installed agent loader's names are refused too: they could name
    files.)"""
    if is_builtin(name):  # (a malformed search:N raises, saying what is allowed)
        return
    guided = parse_guided_name(name)
    try:
        target: Path | None = Path(name if guided is None else guided[1]).resolve()
    except (OSError, ValueError):  # (no path at all: a NUL byte in it)
        target = None
    if target not in known:
        offered = ", ".join(served) or "none"
        raise ValueError(
            f"agent {name!r} is not {' or '.join(AGENTS)}, nor {SEARCH_NAMES}, nor a checkpoint this "
            f"server plays ({offered}, or search:[N:]CHECKPOINT of one); another checkpoint plays "
            "once the server is started with --agent PATH"
        )


def catalog(served: list[str]) -> dict[str, Any]:
    """What a game can be made of: the variants with their options, and the agents by name."""
    return {
        "variants": {
            name: {
                "title": variant.title,
                "options": {option.name: option.default for option in variant.options},
            }
            for name, variant in SPECS.items()
        },
        "agents": [*AGENTS, "search", "search:8", *TIER_NAMES, *served],
    }


def _bad(err: Exception) -> HTTPException:
    return HTTPException(status_code=400, detail=str(err))


def table_words(variant: str, table: dict[str, Any]) -> str:
    """A table as the page's fields name it: ``Classic (2 players)``, ``Classic (4 players, in
    teams, "draw": false)``: the variant's title, then the options set away from their defaults
    as the options field writes them (an option left unset, None, is not named)."""
    spec = SPECS[variant]
    said = [f"{table.get('num_players', 2)} players"] + (["in teams"] if table.get("teams") else [])
    defaults = {option.name: option.default for option in spec.options}
    said += [
        f"{json.dumps(key)}: {json.dumps(value)}"
        for key, value in table.items()
        if key not in ("num_players", "teams") and value is not None and value != defaults.get(key)
    ]
    return f"{spec.title} ({', '.join(said)})"


def options_words(options: dict[str, Any]) -> str:
    """Options as the options field takes them (JSON), unset ones left out."""
    return json.dumps({key: value for key, value in options.items() if value is not None})


def check_agents_fit(named: list[tuple[str, Contestant]], variant: str, options: dict[str, Any]) -> None:
    """A trained agent plays only the table it was trained on (the episode and the reward may
    differ): otherwise a ValueError saying, in the page's own fields (variant, options), which
    table it plays and what to choose."""
    table = rules_table(variant, options)
    for name, agent in named:
        if agent.config is None:
            continue
        trained = agent.config.env
        own = rules_table(trained.variant, trained.options)
        if (trained.variant, own) == (variant, table):
            continue
        plays = f"the agent {name} plays only {table_words(trained.variant, own)}"
        title = SPECS[trained.variant].title
        if trained.variant != variant:
            defaults = {option.name: option.default for option in SPECS[trained.variant].options}
            needed = {key: value for key, value in own.items() if value != defaults.get(key)}
            with_options = f" with options {options_words(needed)}" if needed else ""
            raise ValueError(f"{plays}; choose variant {title}{with_options}, or another agent")
        differ = {key: value for key, value in own.items() if table.get(key) != value}
        unset = [json.dumps(key) for key, value in differ.items() if value is None]
        fixes = [f"set options {options_words(differ)}"] if len(unset) < len(differ) else []
        fixes += [f"leave {' and '.join(unset)} out of the options"] if unset else []
        raise ValueError(
            f"{plays}, not {table_words(variant, table)}; {' and '.join(fixes)} "
            "(episode and reward as you like), or choose another agent"
        )


def new_session(game: NewGame, served: list[str], known: set[Path]) -> Session:
    """A watch or play game, dealt; any bad name or option, or an agent that is not built in nor
    one of the ``served`` checkpoints (:func:`check_served`), raises ValueError before anything
    is kept, in words of the page's own fields."""
    for name in game.agents:
        check_served(name, served, known)
    options = {key: value for key, value in game.options.items() if key != "render_mode"}
    try:
        env = raw_env(game.variant, **options)
    except TypeError as err:
        raise ValueError(f"the options {json.dumps(options)} make no {game.variant} table: {err}") from err
    seats = env.rules.num_players
    contestants = [contestant(name) for name in game.agents]
    check_agents_fit(list(zip(game.agents, contestants, strict=True)), game.variant, options)
    seed = game.seed if game.seed is not None else secrets.randbelow(2**31)
    others = iter(cycle(contestants))
    if game.mode == "play":
        check_seat(env, game.seat)
        seated = [None if s == game.seat else next(others) for s in range(seats)]
    else:
        if len(contestants) > seats:
            raise ValueError(f"{len(contestants)} agents for a table of {seats} seats: give 1 to {seats}")
        seated = list(islice(others, seats))
    agents = [None if c is None else c.agent(env, seed + 1 + s) for s, c in enumerate(seated)]
    labels = [PERSON if c is None else c.label for c in seated]
    names = [f"P{s} (you)" if c is None else f"P{s} ({c.label})" for s, c in enumerate(seated)]
    recorder = GameRecorder(env, options, labels)
    start_game(env, seed, recorder)
    viewer = game.seat if game.mode == "play" else 0
    session = Session(game.mode, env, names, game.seat if game.mode == "play" else None, agents, recorder)
    session.feed = EventFeed(env, viewer, names)
    session.log = session.feed.news()
    if game.mode == "play":
        play_agents(session)
    return session


def agent_move(session: Session) -> None:
    """The agent to move plays its move (through the recorder), and the log takes the news."""
    env, recorder = session.env, session.recorder
    agent = session.agents[session.to_move]
    assert agent is not None and recorder is not None and session.feed is not None
    recorder.step(agent(env, env.observe(env.agent_selection)))
    session.step += 1
    session.log += session.feed.news()


def play_agents(session: Session) -> None:
    """The agents move until it is the person's turn or the game is over."""
    while not session.finished and session.to_move != session.seat:
        agent_move(session)


def replay_session(record: Any) -> Session:
    """A replay of ``record`` at its start (a malformed record: replay's ValueError)."""
    env = replay(record, 0).unwrapped
    names = [f"P{s} ({agent})" for s, agent in enumerate(record["agents"])]
    return Session("replay", env, names, record=record, step=0)


def state_of(session: Session, seat: int | None, reveal: bool) -> dict[str, Any]:
    """The JSON a page draws: the public state, the moves it may click, the log in words."""
    env, names = session.env, session.names
    viewer = _viewer(session, seat)
    legal: list[dict[str, Any]] = []
    if session.mode == "play" and not session.finished and session.to_move == session.seat:
        moves, _ = move_menu(env)
        legal = [
            {"action": m["action"], "text": move_text(m), "points": env.immediate_points(m["action"])}
            for m in moves
        ]
    if session.mode == "replay":
        assert session.record is not None
        actions = session.record["actions"]
        log = [f"{names[s]}: {words}" for s, _, words in actions[: session.step]]
        steps = {"step": session.step, "steps": len(actions)}
    else:
        log, steps = session.log, {"step": session.step}
    shown = viewer is not None and not (session.mode == "replay" and reveal)
    result = None
    if session.finished and session.seat is not None:
        result = result_text(env, session.seat, names)
    elif session.finished:  # nobody is "you": the totals alone, said for what they are
        result = f"{env.episode} over ({final_totals(env, names)})"
    return {
        "mode": session.mode,
        "variant": env.rules.name,
        "names": names,
        "seat": session.seat,
        "viewer": viewer,
        "to_move": None if session.finished else session.to_move,
        "finished": session.finished,
        "public": env.public_state(),
        "legal": legal,
        "log": log[-LOG_LINES:],
        "board": board_text(env, viewer, names) if shown and viewer is not None else env.table_text(names),
        "result": result,
        **steps,
    }


def _viewer(session: Session, seat: int | None) -> int | None:
    """Whose eyes the picture takes: the person's in play; a chosen seat in a replay; none in watch."""
    if session.mode == "play":
        return session.seat
    if session.mode == "replay" and seat is not None:
        check_seat(session.env, seat)
        return seat
    return None


def create_app(agents_dir: Path | str = "agents", checkpoints: Sequence[str] = ()) -> FastAPI:
    """The web app; ``agents_dir`` holds the shipped agents it offers (``<variant>.pt``), and
    ``checkpoints`` (files or run folders) are offered beside them."""
    app = FastAPI(title="domino-env", docs_url=None, redoc_url=None)
    sessions: dict[str, Session] = {}
    served = served_checkpoints(Path(agents_dir), checkpoints)
    known = served_files(served)

    @app.exception_handler(RequestValidationError)
    async def unreadable(_: Request, err: RequestValidationError) -> JSONResponse:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'body'}: {e['msg']}" for e in err.errors())
        return JSONResponse(status_code=400, content={"detail": f"bad request: {wrong}"})

    def keep(session: Session) -> dict[str, Any]:
        game_id = secrets.token_urlsafe(12)
        while len(sessions) >= MAX_SESSIONS:
            sessions.pop(next(iter(sessions)))
        sessions[game_id] = session
        return {"id": game_id, **state_of(session, None, False)}

    def find(game_id: str) -> Session:
        if game_id not in sessions:
            detail = f"no game {game_id!r} (a game lasts as long as the server that made it)"
            raise HTTPException(status_code=404, detail=detail)
        return sessions[game_id]

    @app.get("/")
    def index() -> FileResponse:
        return FileResponse(WEB / "index.html")

    @app.get("/api/catalog")
    def get_catalog() -> dict[str, Any]:
        return catalog(served)

    @app.post("/api/games")
    def create_game(game: NewGame) -> dict[str, Any]:
        try:
            return keep(new_session(game, served, known))
        except ValueError as err:
            raise _bad(err) from err

    @app.post("/api/replays")
    async def open_record(request: Request) -> dict[str, Any]:
        try:
            record = await request.json()
        except ValueError as err:
            detail = f"not a game record: the body is not JSON ({err})"
            raise HTTPException(status_code=400, detail=detail) from err
        try:
            return keep(replay_session(record))
        except ValueError as err:
            raise _bad(err) from err

    @app.get("/api/games/{game_id}")
    def get_state(game_id: str, seat: int | None = None, reveal: bool = False) -> dict[str, Any]:
        session = find(game_id)
        with session.lock:
            try:
                return {"id": game_id, **state_of(session, seat, reveal)}
            except ValueError as err:
                raise _bad(err) from err

    @app.get("/api/games/{game_id}/image.png")
    def get_image(game_id: str, seat: int | None = None, reveal: bool = False) -> Response:
        session = find(game_id)
        with session.lock:
            try:
                viewer = _viewer(session, seat)
            except ValueError as err:
                raise _bad(err) from err
            picture = session.env.table_image(session.names, viewer, reveal)
        buffer = io.BytesIO()
        Image.fromarray(picture).save(buffer, format="PNG")
        return Response(buffer.getvalue(), media_type="image/png", headers={"Cache-Control": "no-store"})

    @app.post("/api/games/{game_id}/move")
    def post_move(game_id: str, move: Move) -> dict[str, Any]:
        session = find(game_id)
        with session.lock:
            if session.mode != "play":
                raise HTTPException(status_code=400, detail=f"a {session.mode} game takes no person's moves")
            if session.finished:
                raise HTTPException(status_code=400, detail="the game is over: start a new one")
            yours = session.to_move == session.seat
            if not yours or move.action not in [m["action"] for m in session.env.legal_moves()]:
                offered = ", ".join(f"{m['action']} ({move_text(m)})" for m in session.env.legal_moves())
                raise HTTPException(
                    status_code=400, detail=f"{move.action} is not a legal move for you now; legal: {offered}"
                )
            assert session.recorder is not None and session.feed is not None
            session.recorder.step(move.action)
            session.step += 1
            session.log += session.feed.news()
            play_agents(session)
            return {"id": game_id, **state_of(session, None, False)}

    @app.post("/api/games/{game_id}/advance")
    def advance(game_id: str) -> dict[str, Any]:
        session = find(game_id)
        with session.lock:
            if session.mode != "watch":
                raise HTTPException(status_code=400, detail="only a watched game advances by itself")
            if session.finished:
                raise HTTPException(status_code=400, detail="the game is over: nothing to advance")
            agent_move(session)
            return {"id": game_id, **state_of(session, None, False)}

    @app.post("/api/games/{game_id}/step")
    def step_replay(
        game_id: str, step: Step, seat: int | None = None, reveal: bool = False
    ) -> dict[str, Any]:
        session = find(game_id)
        with session.lock:
            if session.record is None:
                raise HTTPException(status_code=400, detail=f"a {session.mode} game is not a replay")
            try:
                _viewer(session, seat)  # (a bad seat changes nothing)
                env = replay(session.record, step.step).unwrapped
            except ValueError as err:
                raise _bad(err) from err
            session.env, session.step = env, step.step
            return {"id": game_id, **state_of(session, seat, reveal)}

    @app.get("/api/games/{game_id}/record")
    def get_record(game_id: str) -> dict[str, Any]:
        session = find(game_id)
        with session.lock:
            if session.record is not None:
                return session.record
            assert session.recorder is not None
            return session.recorder.record()

    app.mount("/static", StaticFiles(directory=WEB), name="static")
    return app


def listen(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A socket bound to ``host`` and ``port``, for :func:`serve`; a port out of 1..65535, a host
    that names no address or an address that cannot be bound (a port in use) raise ValueError,
    in one line, before anything is announced."""
    if isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError(f"the port must be a number from 1 to 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as err:
        raise ValueError(f"cannot serve on host {host!r}: {getattr(err, 'strerror', None) or err}") from err
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (as uvicorn does)
    try:
        listener.bind(address)
    except OSError as err:
        listener.close()
        why = err.strerror or str(err)
        raise ValueError(
            f"cannot serve on {host}:{port}: {why.lower()} (choose another --port or --host)"
        ) from err
    return listener


def url_of(listener: socket.socket) -> str:
    """The address a bound socket serves: ``http://127.0.0.1:8000/`` (``http://[::1]:8000/``)."""
    host, port = listener.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(listener: socket.socket, agents_dir: str = "agents", checkpoints: Sequence[str] = ()) -> None:
    """Serve the app on ``listener`` (from :func:`listen`) until Ctrl-C, once it is announced."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(create_app(agents_dir, checkpoints), log_level="warning"))
    print(f"domino-env at {url_of(listener)} (Ctrl-C stops it)", flush=True)
    server.run(sockets=[listener])
