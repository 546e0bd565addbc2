"""The pairings already played under the protocol: what a pairing is filed under (its table,
games and agents, checkpoints by content), a pairing of two sides read from the other side
(:func:`swapped`: stored once, read both ways), and the pairings files (``pairings.json``, the
shipped reference :data:`REFERENCE`) that hold them; another protocol's file is refused."""

from __future__ import annotations

import hashlib
import json
import math
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from training.eval.benchmark import protocol
from training.eval.evaluate import Contestant
from training.matches import Match
from training.model import checkpoint
from training.model.names import parse_guided_name

REFERENCE = Path(__file__).parents[1] / "benchmark_reference_v2.json"  # this version's ladder, played


def _digest(path: str) -> str:
    """The file's content hash, read once while the file stays as it is (a checkpoint written
    again in place, as a run trained again, is read again)."""
    found = Path(path).stat()
    return _content_digest(path, found.st_mtime_ns, found.st_size)


@cache
def _content_digest(path: str, mtime_ns: int, size: int) -> str:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def identity(c: Contestant) -> str:
    """What a pairing is filed under: a built-in agent's name, a checkpoint's content hash (a
    policy-guided search: its worlds and its checkpoint's hash)."""
    if c.config is None:
        return c.spec
    guided = parse_guided_name(c.spec)
    if guided is None:
        return _digest(c.spec)
    worlds, path = guided
    return f"search:{worlds}:{_digest(str(checkpoint.resolve(Path(path))))}"


def swapped(match: Match, lower_score_wins: bool) -> Match:
    """The same games of a two-sided table from the second agent's side."""
    sign = -1.0 if lower_score_wins else 1.0
    return Match(
        games=match.games,
        wins=match.games - match.wins,
        mean_reward=-match.mean_reward,
        mean_rounds=match.mean_rounds,
        steps=match.steps,
        mean_score=match.mean_score - sign * match.margin,
        shares=[1.0 - s for s in match.shares],
        margins=[-m for m in match.margins],
        per_deal=match.per_deal,
        decisions=match.decisions[::-1],
        seconds=match.seconds[::-1],
    )


def checked_match(fields: dict[str, Any], name: str) -> Match:
    """A stored pairing's :class:`~training.matches.Match` (``name``: which, for the message), its
    fields checked as scores read them: finite numbers, a win share and a margin a game (the
    shares in [0, 1], adding up to the wins), whole deals, two agents' decisions and seconds. A
    file edited by hand or cut off mid-list is refused rather than scored."""
    m = Match(**fields)
    lists = (m.shares, m.margins, m.decisions, m.seconds)
    scalars = [m.games, m.wins, m.mean_reward, m.mean_rounds, m.steps, m.mean_score, m.per_deal]
    if not all(isinstance(v, list) for v in lists) or not _finite(
        [*scalars, *(v for part in lists for v in part)]
    ):
        raise ValueError(f"pairing {name}: a field is not a finite number, or a list of them")
    problems = []
    if not (isinstance(m.games, int) and isinstance(m.per_deal, int) and m.games >= 1 and m.per_deal >= 1):
        problems.append(f"{m.games} games in deals of {m.per_deal}")
    elif m.games % m.per_deal:
        problems.append(f"{m.games} games are not whole deals of {m.per_deal}")
    if len(m.shares) != m.games or len(m.margins) != m.games:
        problems.append(f"{len(m.shares)} win shares and {len(m.margins)} margins for {m.games} games")
    if not all(0.0 <= v <= 1.0 for v in m.shares):
        problems.append("a win share outside [0, 1]")
    elif abs(sum(m.shares) - m.wins) > 1e-6:
        problems.append(f"{m.wins} wins, but its win shares add up to {sum(m.shares)}")
    if len(m.decisions) != 2 or len(m.seconds) != 2 or min(*m.decisions, *m.seconds, 0) < 0:
        problems.append("decisions and seconds are not two agents' counts")
    if problems:
        raise ValueError(f"pairing {name}: {'; '.join(problems)}")
    return m


def _finite(values: list[Any]) -> bool:
    """Every value an int or a float (not a bool, a string or None), and finite."""
    return all(type(v) in (int, float) and math.isfinite(v) for v in values)


class OldProtocol(ValueError):
    """A pairings file of another protocol than this one."""


Key = tuple[str, str, str, str, int]  # variant, table, first identity, second identity, games


def key_of(variant: str, first: str, second: str, games: int) -> Key:
    return variant, json.dumps(protocol.standard_table(variant), sort_keys=True), first, second, games


class Store:
    """Pairings already played under the protocol (a reference file, and this run's games)."""

    def __init__(self) -> None:
        self.matches: dict[Key, Match] = {}
        self.read: set[Key] = set()  # the keys that came from the file

    @classmethod
    def load(cls, path: str | Path | None) -> Store:
        """Read a ``pairings.json``; one from another deal list gives nothing. A file that is
        not one, or one of another protocol (v1's: its ladder lacks the search tiers), raises
        ValueError saying so."""
        store = cls()
        if path is None:
            return store
        try:
            data = json.loads(Path(path).read_text())
            if data["protocol"] != protocol.PROTOCOL:
                raise OldProtocol(
                    f"{path} holds protocol {data['protocol']} pairings; this benchmark is "
                    f"{protocol.PROTOCOL_NAME} (its ladder: {', '.join(protocol.LADDER)}, "
                    f"scored against {protocol.TOP}): "
                    f"give a {protocol.PROTOCOL} pairings.json, or --fresh to play every pairing"
                )
            if data["deal_seed"] != protocol.DEAL_SEED:
                return store
            for entry in data["pairings"]:
                k = (entry["variant"], entry["table"], entry["first"], entry["second"], int(entry["games"]))
                store.matches[k] = checked_match(entry["match"], f"{k[0]} {k[2]} against {k[3]}")
        except OldProtocol:
            raise
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"{path} is not a benchmark pairings file (pairings.json): {type(err).__name__}: {err}"
            ) from err
        store.read = set(store.matches)
        return store

    def save(self, path: Path, keys: set[Key]) -> None:
        entries = [
            {"variant": k[0], "table": k[1], "first": k[2], "second": k[3], "games": k[4], "match": vars(m)}
            for k, m in sorted(self.matches.items())
            if k in keys
        ]
        data = {
            "protocol": protocol.PROTOCOL,
            "deal_seed": protocol.DEAL_SEED,
            "version": version("domino-env"),
            "pairings": entries,
        }
        unfinished = path.with_name(path.name + ".tmp")  # replaced whole: a cut-off write keeps the old
        unfinished.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        unfinished.replace(path)
